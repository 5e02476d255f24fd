"""Where a database lives and how to reach it (docs/storage.md, "Where a database lives"; docs/configuration.md).

A ``Path`` location is always a local directory, never routed through object
storage, and is given to LanceDB as an absolute path. A string location is a
URI (``s3://…``) opened with ``lancedb.storage_options``.

Existence is judged without creating anything: LanceDB's ``connect`` creates a
missing local directory, so a local database is checked on the file system
first; a URI is listed (which creates nothing on object storage). A location
counts as a database only when its ``settings`` table exists: settings is
created last, in one commit with its row, so a half-created database counts as
missing and ``create=True`` completes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from haiku.core._lancedb import import_lancedb
from haiku.core.config import AppConfig
from haiku.core.lance_session import lance_session
from haiku.core.scope import DatabaseRef
from haiku.core.store.schema import SETTINGS

if TYPE_CHECKING:
    import lancedb


@dataclass(frozen=True)
class Location:
    ref: DatabaseRef
    path: Path | None  # resolved absolute path of a local database
    uri: str  # what LanceDB is given

    @classmethod
    def of(cls, ref: DatabaseRef) -> Location:
        if isinstance(ref.location, Path):
            path = ref.location.expanduser().resolve()
            return cls(ref=ref, path=path, uri=str(path))
        return cls(ref=ref, path=None, uri=ref.location)

    @property
    def is_local(self) -> bool:
        return self.path is not None

    def display(self) -> str:
        return str(self.path) if self.path is not None else self.uri


# Object-storage requests time out by default (an endpoint that accepts and never
# answers must not hang a command); ``lancedb.storage_options`` overrides each key.
DEFAULT_STORAGE_OPTIONS: dict[str, str] = {"connect_timeout": "5s", "timeout": "60s"}


def storage_options(config: AppConfig) -> dict[str, str]:
    """What a URI database is opened with: the defaults, then the configured options."""
    return {**DEFAULT_STORAGE_OPTIONS, **config.lancedb.storage_options}


async def connect(location: Location, config: AppConfig) -> lancedb.AsyncConnection:
    lancedb = import_lancedb()
    interval = config.lancedb.read_consistency_interval_seconds
    return await lancedb.connect_async(
        location.uri,
        read_consistency_interval=timedelta(seconds=interval) if interval is not None else None,
        storage_options=None if location.is_local else storage_options(config),
        session=lance_session(config),
    )


async def table_names(db: lancedb.AsyncConnection) -> set[str]:
    names: set[str] = set()
    token: str | None = None
    while True:
        response = await db.list_tables(page_token=token)
        names.update(response.tables)
        token = response.page_token
        if not token:
            return names


async def database_exists(
    location: Location, config: AppConfig, db: lancedb.AsyncConnection | None = None
) -> bool:
    """Whether the location holds a haiku database. Creates nothing.

    A URI is listed through ``db`` when given, else through a connection of its own.
    """
    if location.path is not None:
        return (location.path / f"{SETTINGS}.lance").is_dir()
    if db is not None:
        return SETTINGS in await table_names(db)
    own = await connect(location, config)
    try:
        return SETTINGS in await table_names(own)
    finally:
        own.close()
