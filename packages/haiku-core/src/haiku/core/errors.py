"""Every error haiku-core raises, in one place (docs/design.md).

The CLI maps these to ``Error: <message>`` with exit 1, so each message must be
a complete sentence a user can act on, naming the database by its configured
name and never by its location.

Every type derives from ``HaikuError`` as well as from the builtin base callers
expect of it (``KeyError`` or ``ValueError`` for some), so ``except HaikuError`` catches
them all while ``except KeyError`` / ``except ValueError`` keep working.

The classmethods build the messages, so every package
words the same situation the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

__all__ = [
    "AmbiguousCitationError",
    "AmbiguousDatabaseError",
    "ConfigMismatchError",
    "ConversionError",
    "ConverterUnavailableError",
    "DatabaseLockedError",
    "HaikuError",
    "ImageQueryError",
    "InvalidConfigError",
    "LimitTooLargeError",
    "MigrationRequiredError",
    "MissingEnvVarError",
    "NoPageLayoutError",
    "NotFoundError",
    "PictureNotFoundError",
    "QueryTooLongError",
    "ReadOnlyError",
    "SourceUnavailableError",
    "TagError",
    "UnknownDatabaseError",
    "UnknownTableError",
    "database_label",
    "missing_database",
    "names_list",
]


def names_list(names: Iterable[str | None]) -> str:
    """Render database names the way every message does: ``a, b``."""
    rendered = [n if n is not None else "(unnamed)" for n in names]
    return ", ".join(rendered) if rendered else "none"


def database_label(name: str | None, *, unnamed: str = "the database") -> str:
    """How every message names a database: ``database 'NAME'``; ``unnamed`` for one without a name."""
    return f"database '{name}'" if name is not None else unnamed


def skip_reason(name: str, why: str) -> str:
    """Why a search left database ``name`` out (``search.on_unavailable: skip``), naming it
    once: the reason (``database 'archive' does not exist; …``) usually names it already."""
    return why if f"'{name}'" in why else f"{database_label(name)}: {why}"


def missing_database(name: str | None, *, at: str | None = None) -> str:
    """The one wording for a database that does not exist, with the command that creates it.

    ``at``: the location, only for a database the caller gave by path (it is theirs to see).
    """
    if at is None:
        return f"{database_label(name)} does not exist; create it with `haiku-rag --db-name {name} init`"
    label = database_label(name)
    command = f"haiku-rag init --db {at}" if name is not None else "haiku-rag init"
    return f"{label} does not exist at {at}; create it with `{command}`"


class HaikuError(Exception):
    """Base of every haiku error; its message is meant for the user as is."""

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only constructor arguments defeat the default exception pickling
        # (it calls the class with ``args``), so every subclass rebuilds from its state.
        return (_rebuild, (type(self), self.args, self.__dict__))


class SourceUnavailableError(HaikuError):
    """A configured database is missing or could not be opened (docs/storage.md)."""

    def __init__(self, message: str, *, database: str | None = None) -> None:
        super().__init__(message)
        self.database = database
        self.holder: dict[str, Any] | None = None  # {command, pid} of the owner, when it said

    @classmethod
    def missing(cls, name: str) -> SourceUnavailableError:
        return cls(missing_database(name), database=name)

    @classmethod
    def unconfigured(cls, name: str, looked_at: Iterable[str], data_dir: object) -> SourceUnavailableError:
        """The default database is missing because no configuration file was found."""
        return cls(
            f"no configuration file was found (looked at: {'; '.join(looked_at)}), so haiku-rag read the "
            f"default {database_label(name)} in {data_dir}, which does not exist: write a configuration naming "
            "your databases (`haiku-rag init-config`), or let haiku-ingester create this one",
            database=name,
        )

    @classmethod
    def unopenable(cls, name: str, error: BaseException) -> SourceUnavailableError:
        """Only the exception's type name travels: its text may hold a path or bucket."""
        return cls(f"{database_label(name)} could not be opened: {type(error).__name__}", database=name)


class UnknownDatabaseError(HaikuError, KeyError):
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
        """"unknown database(s) x; this client covers a, b"."""
        names = list(dict.fromkeys(unknown))
        return cls(
            f"unknown database(s) {', '.join(names)}; this client covers {names_list(covered)}",
            names=names,
        )


class AmbiguousDatabaseError(HaikuError):
    """A one-database operation asked of a set, or two selectors for one database."""

    @classmethod
    def cli_needs_one(cls, names: Iterable[str | None], *, at: bool = False) -> AmbiguousDatabaseError:
        """A CLI command that works on one database, facing a configured set."""
        what = "--at reads a single database" if at else "this command works on a single database"
        return cls(
            f"lancedb.databases names {names_list(names)}; {what}: pass --db-name NAME, or --db PATH"
        )

    @classmethod
    def cli_get_needs_one(
        cls, names: Iterable[str | None], document_id: str, holders: Sequence[str]
    ) -> AmbiguousDatabaseError:
        """`haiku-rag get ID` facing a set: which of its databases hold the id (docs/cli.md#get)."""
        if not holders:
            where = f"none of them holds document {document_id}"
        elif len(holders) == 1:
            where = f"document {document_id} is in database '{holders[0]}': rerun with --db-name {holders[0]}"
        else:
            quoted = ", ".join(f"'{name}'" for name in holders)
            where = f"document {document_id} is in databases {quoted}: rerun with --db-name and one of them"
        return cls(f"lancedb.databases names {names_list(names)}; get reads a single database, and {where}")

    @classmethod
    def cli_chunk_in_several(cls, command: str, chunk_id: str, holders: Sequence[str]) -> AmbiguousDatabaseError:
        """`haiku-rag visualize ID` over a set where more than one database holds the chunk id."""
        quoted = ", ".join(f"'{name}'" for name in holders)
        return cls(
            f"chunk {chunk_id} is in databases {quoted} (a copied database shares ids); {command} draws "
            "from one: rerun with --db-name and one of them"
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


class ConfigMismatchError(HaikuError):
    """Embedder identities conflict (database vs config, or across a selection; docs/configuration.md)."""


class AmbiguousCitationError(HaikuError):
    """A cited chunk id resolves to more than one database (docs/qa.md)."""

    @classmethod
    def shared(cls, chunk_id: str, names: Iterable[str | None]) -> AmbiguousCitationError:
        return cls(
            f"chunk id {chunk_id} names a chunk in more than one database ({names_list(names)}); "
            "a citation records the id alone and cannot say which"
        )

    @classmethod
    def already_cited(cls, chunk_id: str, before: Iterable[str | None], now: str | None) -> AmbiguousCitationError:
        return cls(
            f"chunk id {chunk_id} from database {now} was already cited from another database "
            f"({names_list(before)}) in this conversation; a citation records the id alone and cannot say which"
        )


class MigrationRequiredError(HaikuError):
    """The database (or the tag being read) needs migrations first (docs/storage.md)."""


class ReadOnlyError(HaikuError):
    """A write on a read-only or tagged store."""


class TagError(HaikuError, ValueError):
    """A missing or partial tag, or a tagged entry where the live database is needed."""


class UnknownTableError(HaikuError, ValueError):
    """A table name that is none of a database's tables (``history --table``)."""

    @classmethod
    def of(cls, table: str, tables: Iterable[str]) -> UnknownTableError:
        return cls(f"unknown table '{table}'; the tables are {', '.join(sorted(tables))}")


class PictureNotFoundError(HaikuError, KeyError):
    """A picture asked for by document id and item ref that the database does not hold (docs/storage.md)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""

    @classmethod
    def of(cls, label: str, document_id: str, ref: str, *, document_exists: bool) -> PictureNotFoundError:
        if not document_exists:
            return cls(f"{label} holds no document '{document_id}'")
        return cls(f"document '{document_id}' in {label} has no stored picture '{ref}'")


class DatabaseLockedError(HaikuError):
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
        cls, name: str | None, command: str, holder: dict[str, Any] | None = None
    ) -> DatabaseLockedError:
        """A lifecycle command refused because a running haiku-ingester owns the database."""
        held = "its lock .haiku-ingester.lock is held"
        if holder is not None:
            command = f"`{holder['command']}`, " if holder.get("command") else ""
            held = f"{command}pid {holder['pid']}; {held}"
        return cls(
            f"{database_label(name)} is owned by a running haiku-ingester ({held}), "
            f"so `haiku-rag {command}` did not run: stop the ingester first (systemctl stop haiku-ingester), "
            "or pass --force to run anyway (the ingester does not see the change until it restarts)",
            database=name,
        )


class MissingEnvVarError(HaikuError, ValueError):
    """An unset or empty ``${VAR}`` without a default in the configuration."""

    def __init__(self, var: str, where: str | None = None) -> None:
        location = f" (in {where})" if where else ""
        super().__init__(
            f"environment variable {var} is unset or empty{location}; "
            f"set it, or give a default with ${{{var}:-default}}"
        )
        self.var = var
        self.where = where


class QueryTooLongError(HaikuError, ValueError):
    """A search query longer than ``search.max_query_chars`` (a bound on the work one query may cost)."""

    @classmethod
    def check(cls, query: str, limit: int) -> None:
        if len(query) > limit:
            raise cls(
                f"the query is {len(query):,} characters long; a search takes at most {limit:,} "
                "(search.max_query_chars): shorten it"
            )


class LimitTooLargeError(HaikuError, ValueError):
    """A result limit above ``search.max_limit``: one bound for search and listing, everywhere
    (docs/configuration.md#search)."""

    @classmethod
    def check(cls, limit: int | None, bound: int, *, what: str = "limit") -> None:
        """Raise when ``limit`` is above ``bound``; ``what`` names the argument (``--limit``)."""
        if limit is not None and limit > bound:
            raise cls(
                f"{what} {limit:,} is more than the {bound:,} results one call returns "
                "(search.max_limit): ask for fewer"
            )

    MAX_OFFSET = 2**32 - 1
    """The largest offset a listing takes (LanceDB's own bound)."""

    @classmethod
    def check_offset(cls, offset: int | None) -> None:
        if offset is not None and offset > cls.MAX_OFFSET:
            raise cls(f"offset {offset:,} is more than {cls.MAX_OFFSET:,}, the largest offset a listing takes")


class EmptyQueryError(HaikuError, ValueError):
    """A search query or question that is empty or blank: it matches nothing in particular."""

    def __init__(self, message: str = "the query is empty; say what to search for") -> None:
        super().__init__(message)

    @classmethod
    def check(cls, query: str) -> None:
        if not query or not query.strip():
            raise cls()


class InvalidFilterError(HaikuError, ValueError):
    """A document filter that cannot run (the message names the documented document fields) or failed on the rows."""

    @classmethod
    def of(cls, filter: str, detail: str, fields: Iterable[str]) -> InvalidFilterError:
        return cls(
            f"invalid document filter {filter!r}: {detail}. A filter is an SQL WHERE over the document "
            f"fields {', '.join(fields)}"
        )

    @classmethod
    def failed(cls, filter: str, reason: str) -> InvalidFilterError:
        """A filter that runs but fails on the stored documents (a cast, a division by zero)."""
        return cls(f"document filter {filter!r} failed on the stored documents: {reason}")


class InvalidConfigError(HaikuError, ValueError):
    """The configuration file is missing, unreadable or fails validation."""


class ConversionError(HaikuError, ValueError):
    """A file the converter cannot turn into a document (docs/ingester.md, "Formats")."""


class ConverterUnavailableError(HaikuError):
    """Conversion asked of an install without the ``convert`` extra (docling)."""

    def __init__(self, missing: str = "docling") -> None:
        super().__init__(
            f"converting files needs the convert extra ({missing} is not installed): "
            "pip install 'haiku-core[convert]'"
        )


class NotFoundError(HaikuError, LookupError):
    """A document or chunk id that the database asked does not hold."""

    @classmethod
    def chunk(cls, chunk_id: str, name: str | None) -> NotFoundError:
        return cls(f"{database_label(name)} holds no chunk with id {chunk_id}")

    @classmethod
    def chunk_in_none(cls, chunk_id: str, names: Sequence[str | None]) -> NotFoundError:
        """No database of a set (in configured order) holds the chunk."""
        return cls(f"none of the databases {names_list(names)} holds a chunk with id {chunk_id}")

    @classmethod
    def document(cls, document_id: str, names: Sequence[str | None]) -> NotFoundError:
        """None of the databases asked (one, or a set in configured order) holds the document."""
        if len(names) == 1:
            return cls(f"{database_label(names[0])} holds no document with id {document_id}")
        return cls(f"none of the databases {names_list(names)} holds a document with id {document_id}")


class NoPageLayoutError(HaikuError):
    """A chunk with nothing to draw: no page boxes, or no stored page images (docs/client.md#pictures-and-pages)."""

    @classmethod
    def no_boxes(cls, chunk_id: str, name: str | None) -> NoPageLayoutError:
        return cls(
            f"chunk {chunk_id} in {database_label(name)} has no page layout: its document has no pages "
            "(markdown, text, HTML…) or was stored before the database kept page layout"
        )

    @classmethod
    def no_images(
        cls, chunk_id: str, name: str | None, pages: Iterable[int], *, kind: str | None = None
    ) -> NoPageLayoutError:
        """No stored image of the chunk's pages. ``kind`` names the document's format when it is not a
        PDF: only PDF pages are stored as images (docs/ingester.md#structure-pictures-and-page-images)."""
        shown = ", ".join(str(page) for page in pages)
        where = f"chunk {chunk_id} in {database_label(name)} lies on page(s) {shown}"
        if kind is not None:
            return cls(
                f"{where} of a {kind} document, and page images are stored for PDFs only: there is no "
                "page image to draw on (its boxes are in `search --json` and `get --items`)"
            )
        return cls(
            f"{where} of a PDF, but no page image is stored for them: processing.page_images was off "
            "when the document was ingested, or it was stored before the database kept page images "
            "(with it on, `haiku-ingester reprocess --db-name NAME` stores them)"
        )


def _rebuild(cls: type[BaseException], args: tuple[Any, ...], state: dict[str, Any]) -> BaseException:
    # Without calling __init__: errors cross process boundaries in the
    # ingester's workers and the sandbox.
    error = cls.__new__(cls, *args)
    error.args = args
    error.__dict__.update(state)
    return error


class ImageQueryError(HaikuError, ValueError):
    """An image query cannot run: no multimodal embedder is configured, or the image is unreadable
    (docs/pictures.md, "Image queries")."""

    @classmethod
    def text_only(cls, identity: str) -> ImageQueryError:
        return cls(
            f"image queries need a multimodal embedder (embeddings.model.provider: openai-multimodal), "
            f"but the configured embedder {identity} embeds text only"
        )
