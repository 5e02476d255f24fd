"""Which databases a command or client covers (docs/client.md). Opens nothing."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from haiku.core.config.app import AppConfig
from haiku.core.config.storage import DEFAULT_DATABASE_NAME, is_uri
from haiku.core.errors import (
    AmbiguousDatabaseError,
    TagError,
    UnknownDatabaseError,
    database_label,
    names_list,
)


def _as_location(location: Path | str) -> Path | str:
    """A URI stays a string; anything else is a local path (``~`` expanded)."""
    if isinstance(location, str) and is_uri(location):
        return location
    return Path(location).expanduser()


@dataclass(frozen=True)
class DatabaseRef:
    """One database: its configured name and where it lives."""

    name: str | None
    location: Path | str
    given: bool = False
    tag: str | None = None

    def __post_init__(self) -> None:
        if self.name is not None and not self.name.strip():
            raise ValueError("a database name cannot be blank")
        if self.tag is not None and not self.tag.strip():
            raise ValueError(f"{database_label(self.name)} has a blank tag")
        location = _as_location(self.location)
        if self.given and not isinstance(location, Path):
            raise ValueError(f"a given database location must be a local path, got {location}")
        object.__setattr__(self, "location", location)

    @classmethod
    def at(cls, path: str | Path) -> DatabaseRef:
        """A caller-given local path, named by its stem."""
        as_path = Path(path)
        if not as_path.stem:
            raise ValueError(f"database path {path!s} has no name (stem) to call it by")
        return cls(name=as_path.stem, location=as_path, given=True)

    @classmethod
    def configured(cls, name: str, location: Path | str, tag: str | None = None) -> DatabaseRef:
        return cls(name=name, location=location, given=False, tag=tag)

    @property
    def db_path(self) -> Path | None:
        return self.location if isinstance(self.location, Path) else None

    @property
    def label(self) -> str:
        """How messages name this database."""
        return self.name if self.name is not None else str(self.location)

    def at_tag(self, tag: str) -> DatabaseRef:
        """This database read at ``tag``; an entry configured at a tag takes no other."""
        if self.tag is not None:
            raise AmbiguousDatabaseError(
                f"{database_label(self.name)} is configured at tag '{self.tag}' and takes no other; "
                f"drop the tag '{tag}'"
            )
        return replace(self, tag=tag)


@dataclass(frozen=True)
class DatabaseScope:
    """A non-empty, ordered selection of databases."""

    databases: tuple[DatabaseRef, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        databases = tuple(self.databases)
        if not databases:
            raise ValueError("a database scope covers at least one database")
        for ref in databases:
            if not isinstance(ref, DatabaseRef):
                raise TypeError(f"a database scope holds DatabaseRef values, not {type(ref).__name__}")
        object.__setattr__(self, "databases", databases)

    @property
    def names(self) -> tuple[str | None, ...]:
        return tuple(ref.name for ref in self.databases)

    @property
    def covers_multiple(self) -> bool:
        return len(self.databases) > 1

    def get(self, name: str) -> DatabaseRef:
        for ref in self.databases:
            if ref.name == name:
                return ref
        raise UnknownDatabaseError(
            f"unknown {database_label(name)}; the databases are {names_list(self.names)}", names=[name]
        )

    @classmethod
    def at(cls, path: str | Path) -> DatabaseScope:
        return cls((DatabaseRef.at(path),))

    @classmethod
    def resolve(
        cls,
        config: AppConfig,
        *,
        database_name: str | None = None,
        database_path: str | Path | None = None,
    ) -> DatabaseScope:
        """The configuration's databases, or the one a selector picks."""
        if database_name is not None and database_path is not None:
            raise AmbiguousDatabaseError(
                "a database name and a database path both name one database; pass one of them"
            )
        configured = config.lancedb.databases
        if database_path is not None:
            if configured:
                raise AmbiguousDatabaseError(
                    f"the database path {database_path} was given beside the configured databases "
                    f"{names_list(configured)}; select one with a database name or pass the path "
                    "with no lancedb.databases configured"
                )
            return cls.at(database_path)
        full = cls._configured(config)
        if database_name is None:
            return full
        if not configured and config.lancedb.uri is not None:
            raise UnknownDatabaseError(
                f"unknown {database_label(database_name)}; lancedb.uri configures one unnamed database",
                names=[database_name],
            )
        return cls((full.get(database_name),))

    @staticmethod
    def _configured(config: AppConfig) -> DatabaseScope:
        lancedb = config.lancedb
        if lancedb.databases:
            return DatabaseScope(
                tuple(
                    DatabaseRef.configured(name, entry.location, entry.tag)
                    for name, entry in lancedb.databases.items()
                )
            )
        if lancedb.uri is not None:
            return DatabaseScope((DatabaseRef(name=None, location=lancedb.uri),))
        return DatabaseScope(
            (
                DatabaseRef.configured(
                    DEFAULT_DATABASE_NAME, config.data_dir / f"{DEFAULT_DATABASE_NAME}.lancedb"
                ),
            )
        )

    def select(self, names: Iterable[str]) -> DatabaseScope:
        """The named refs in the order given, duplicates collapsed."""
        if isinstance(names, str):
            raise TypeError(f"sources takes a list of database names, not the string {names!r}")
        wanted = list(dict.fromkeys(names))
        if not wanted:
            raise ValueError("sources=[] selects no database; pass None for all of them")
        known = {ref.name: ref for ref in self.databases}
        unknown = [n for n in wanted if n not in known]
        if unknown:
            raise UnknownDatabaseError(
                f"unknown database(s) {', '.join(unknown)}; configured: {names_list(self.names)}",
                names=unknown,
            )
        return DatabaseScope(tuple(known[n] for n in wanted))

    def refuse_tags(self, work: str) -> None:
        """``work`` completes the sentence, e.g. "the ingester writes"."""
        for ref in self.databases:
            if ref.tag is not None:
                raise TagError(
                    f"{database_label(ref.name)} is configured at tag '{ref.tag}', and {work} the live "
                    "database; select an entry without a tag"
                )
