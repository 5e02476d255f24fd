"""``DatabaseError``: a database cannot be used as asked (docs/storage.md)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from haiku.core._errors.base import (
    DatabaseError,
    Hint,
    create_hint,
    database_label,
    missing_problem,
    names_list,
)


def _name_one(names: Iterable[str | None]) -> Hint:
    return Hint(
        "name-one-database",
        "name one (DatabaseScope.resolve with database_name, or database_path)",
        {"names": tuple(names)},
        joiner=": ",
    )


class SourceUnavailableError(DatabaseError):
    """A configured database is missing or could not be opened (docs/storage.md)."""

    def __init__(self, message: str, *, database: str | None = None) -> None:
        super().__init__(message)
        self.database = database
        self.holder: dict[str, Any] | None = None  # {command, pid} of the owner, when it said

    @classmethod
    def missing(cls, name: str) -> SourceUnavailableError:
        return cls.hinted(missing_problem(name), create_hint(name), database=name)

    @classmethod
    def unconfigured(cls, name: str, looked_at: Iterable[str], data_dir: object) -> SourceUnavailableError:
        """The default database is missing because no configuration file was found."""
        return cls.hinted(
            f"no configuration file was found (looked at: {'; '.join(looked_at)}), so the default "
            f"{database_label(name)} in {data_dir} was read, which does not exist",
            Hint(
                "write-configuration",
                "write a configuration naming your databases (docs/configuration.md), or create this one",
                {"database": name},
                joiner=": ",
            ),
            database=name,
        )

    @classmethod
    def unopenable(cls, name: str, error: BaseException) -> SourceUnavailableError:
        """Only the exception's type name travels: its text may hold a path or bucket."""
        return cls(f"{database_label(name)} could not be opened: {type(error).__name__}", database=name)


class UnknownDatabaseError(DatabaseError, KeyError):
    """A database name outside the relevant coverage.

    A ``KeyError`` so that ``except KeyError`` keeps working for callers that
    treat coverage like a mapping; ``str()`` is the plain sentence rather than
    KeyError's quoted repr.
    """

    def __init__(self, message: str, *, names: Iterable[str] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.names = tuple(names)

    def __str__(self) -> str:
        return self.message

    @classmethod
    def on_client(cls, unknown: Iterable[str], covered: Iterable[str | None]) -> UnknownDatabaseError:
        """ "unknown database(s) x; this client covers a, b"."""
        names = list(dict.fromkeys(unknown))
        return cls(
            f"unknown database(s) {', '.join(names)}; this client covers {names_list(covered)}",
            names=names,
        )


class AmbiguousDatabaseError(DatabaseError):
    """A one-database operation asked of a set, or two selectors for one database."""

    @classmethod
    def needs_one(cls, names: Iterable[str | None], *, operation: str | None = None) -> AmbiguousDatabaseError:
        """An operation on one database facing a configured set; ``operation`` names it as the caller
        knows it (``--at``, for a read at a tag)."""
        names = tuple(names)
        what = f"{operation} reads a single database" if operation else "this works on a single database"
        return cls.hinted(f"lancedb.databases names {names_list(names)}; {what}", _name_one(names))

    @classmethod
    def document_in(
        cls, operation: str, names: Iterable[str | None], document_id: str, holders: Sequence[str]
    ) -> AmbiguousDatabaseError:
        """Reading one document (``operation``) from a set: which of its databases hold the id."""
        problem = f"lancedb.databases names {names_list(names)}; {operation} reads a single database, and "
        if not holders:
            return cls(f"{problem}none of them holds document {document_id}")
        if len(holders) == 1:
            return cls.hinted(
                f"{problem}document {document_id} is in database '{holders[0]}'",
                Hint("read-from", f"read it from '{holders[0]}'", {"database": holders[0]}, joiner=": "),
            )
        quoted = ", ".join(f"'{name}'" for name in holders)
        return cls.hinted(
            f"{problem}document {document_id} is in databases {quoted}",
            Hint("read-from-one", "read it from one of them", {"databases": tuple(holders)}, joiner=": "),
        )

    @classmethod
    def chunk_in_several(
        cls, operation: str, chunk_id: str, holders: Sequence[str]
    ) -> AmbiguousDatabaseError:
        """Drawing a chunk from a set where more than one database holds the chunk id."""
        quoted = ", ".join(f"'{name}'" for name in holders)
        return cls.hinted(
            f"chunk {chunk_id} is in databases {quoted} (a copied database shares ids); {operation} draws "
            "from one",
            Hint("read-from-one", "ask one of them", {"databases": tuple(holders)}, joiner=": "),
        )

    @classmethod
    def needs_source(cls, operation: str, names: Iterable[str | None]) -> AmbiguousDatabaseError:
        """A picture method asked of a set without ``source``: a chunk or picture carries no database."""
        return cls(
            f"{operation} needs source= on a client covering several databases ({names_list(names)}), "
            "since an id names no database; pass source='NAME'"
        )

    @classmethod
    def client_needs_one(cls, operation: str, names: Iterable[str | None]) -> AmbiguousDatabaseError:
        """A client operation that works on one database, asked of a client covering a set."""
        return cls(
            f"{operation} works on one database, and this client covers {names_list(names)}; "
            "select one with clients_for([name])"
        )


class MigrationRequiredError(DatabaseError):
    """The database (or the tag being read) needs migrations first (docs/storage.md)."""


class ReadOnlyError(DatabaseError):
    """A write on a read-only or tagged store."""


class TagError(DatabaseError, ValueError):
    """A missing or partial tag, or a tagged entry where the live database is needed."""


class UnknownTableError(DatabaseError, ValueError):
    """A table name that is none of a database's tables (``history --table``)."""

    @classmethod
    def of(cls, table: str, tables: Iterable[str]) -> UnknownTableError:
        return cls(f"unknown table '{table}'; the tables are {', '.join(sorted(tables))}")


class DatabaseLockedError(DatabaseError):
    """The writer lock (or the ingester ownership lock) could not be taken in time."""

    def __init__(self, message: str, *, database: str | None = None) -> None:
        super().__init__(message)
        self.database = database
        self.holder: dict[str, Any] | None = None  # {command, pid} of the owner, when it said

    @classmethod
    def already_owned(
        cls, label: str, name: str | None, lock: str, holder: dict[str, Any] | None
    ) -> DatabaseLockedError:
        """A second owner refused: the holder named when it wrote who it is (``OwnershipLock``)."""
        command = holder.get("command") if holder is not None else None
        if holder is None or not command:
            pid = f", pid {holder['pid']}" if holder is not None else ""
            error = cls(
                f"{label} is already owned by another {lock}{pid} (its lock .haiku-{lock}.lock is held); "
                f"a database has one {lock} at a time",
                database=name,
            )
        else:
            error = cls(
                f"{label} is owned by `{command}`, pid {holder['pid']} (its lock .haiku-{lock}.lock is held): "
                f"stop {str(command).split()[-1]} first; a database has one {lock} at a time",
                database=name,
            )
        error.holder = holder
        return error

    @classmethod
    def owned_by_ingester(
        cls, name: str | None, operation: str, holder: dict[str, Any] | None = None
    ) -> DatabaseLockedError:
        """A lifecycle operation refused because a running haiku-ingester owns the database.

        ``operation`` is how the caller names what did not run (``tag restore``).
        """
        held = "its lock .haiku-ingester.lock is held"
        if holder is not None:
            command = f"`{holder['command']}`, " if holder.get("command") else ""
            held = f"{command}pid {holder['pid']}; {held}"
        return cls.hinted(
            f"{database_label(name)} is owned by a running haiku-ingester ({held}), so {operation} did not run",
            Hint(
                "stop-ingester-or-force",
                "stop the ingester first, or force it "
                "(the ingester does not see the change until it restarts)",
                {"database": name, "operation": operation},
                joiner=": ",
            ),
            database=name,
        )
