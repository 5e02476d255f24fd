"""The state every part of a ``Store`` shares, and the write discipline.

Every write goes through ``_writing(action)``: it refuses read-only and tagged
stores, takes the writer lock (re-entrant for the task holding it), and brings
every table handle to the latest version first, so decisions made under the
lock (which chunks are orphans, which document a uri names) never rest on a
view older than another process's last write.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from haiku.core.config import AppConfig
from haiku.core.embedders import EmbedderIdentity
from haiku.core.errors import ReadOnlyError
from haiku.core.logs import get_logger
from haiku.core.scope import DatabaseRef
from haiku.core.store._location import Location
from haiku.core.store.locks import WriterLock
from haiku.core.store.schema import CHUNKS, DOCUMENTS, SETTINGS, TABLES, StoreSettings

if TYPE_CHECKING:  # lancedb loads on first open, keeping `import haiku.core.store` light
    from lancedb import AsyncConnection
    from lancedb.table import AsyncTable

log = get_logger("haiku.core.store")


class StoreBase:
    def __init__(
        self,
        ref: DatabaseRef,
        config: AppConfig,
        location: Location,
        db: AsyncConnection,
        *,
        read_only: bool,
        tag: str | None,
    ) -> None:
        self.ref = ref
        self.config = config
        self._location = location
        self._db = db
        self.read_only = read_only or tag is not None
        self.tag = tag
        self.created = False  # True when this open created the database
        self._tables: dict[str, AsyncTable] = {}
        self._settings = StoreSettings(schema_version=0, identity=None)
        self._vector_dim = config.embeddings.model.vector_dim
        self._lock = WriterLock(ref, config.storage.writer_lock_timeout_s)
        self._closed = False
        self._dirty = False  # written since the last vacuum
        self._last_auto_vacuum = time.monotonic()
        self._last_vacuum_seconds = 0.0  # how long this store's last vacuum took
        self._vacuum_task: asyncio.Task | None = None
        self._pinned_chunks: tuple[int, AsyncTable] | None = None
        # Whether the tables carry the ``revision`` column (schema version 2 on); set on open.
        self._revisioned = True

    # --- identity -------------------------------------------------------------------
    @property
    def name(self) -> str | None:
        return self.ref.name

    @property
    def location(self) -> Path | str:
        """The resolved local path, or the URI."""
        return self._location.path if self._location.path is not None else self._location.uri

    @property
    def identity(self) -> EmbedderIdentity | None:
        return self._settings.identity

    @property
    def schema_version(self) -> int:
        return self._settings.schema_version

    @property
    def vector_dim(self) -> int:
        """The dimension of the stored vectors (the chunk schema's, not the configuration's)."""
        return self._vector_dim

    @property
    def rebuild_marker(self) -> dict | None:
        """What an unfinished ``haiku-ingester rebuild`` left in the settings, if anything."""
        return self._settings.rebuild_marker

    @property
    def _deadline_s(self) -> float | None:
        """How long one read may take: bounded on object storage only (see ``_failures``)."""
        return None if self._location.is_local else self.config.lancedb.object_storage_timeout_s

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def label(self) -> str:
        """How messages name this database: by name, never by location when it has one."""
        return f"database '{self.name}'" if self.name is not None else "the database"

    # --- tables ---------------------------------------------------------------------
    @property
    def connection(self) -> AsyncConnection:
        return self._db

    def table(self, name: str) -> AsyncTable:
        try:
            return self._tables[name]
        except KeyError:
            raise ValueError(f"unknown table {name!r}; the tables are {', '.join(TABLES)}") from None

    @property
    def _documents(self) -> AsyncTable:
        return self._tables[DOCUMENTS]

    @property
    def _chunks(self) -> AsyncTable:
        return self._tables[CHUNKS]

    @property
    def _settings_table(self) -> AsyncTable:
        return self._tables[SETTINGS]

    async def _refresh_to_latest(self) -> None:
        for table in self._tables.values():
            await table.checkout_latest()
        self._pinned_chunks = None

    async def _read_settings(self) -> StoreSettings:
        rows = await self._settings_table.query().limit(2).to_list()
        if len(rows) != 1:
            raise RuntimeError(f"the settings table holds {len(rows)} rows, expected exactly one")
        return StoreSettings.from_row(rows[0])

    async def _write_settings(self, settings: StoreSettings) -> None:
        """Replace the one settings row in a single commit (caller holds the writer lock)."""
        await self._settings_table.add(settings.to_table(), mode="overwrite")
        self._settings = settings

    # --- write discipline -----------------------------------------------------------
    def _require_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"{self.label} is closed")

    def _require_writable(self, action: str) -> None:
        self._require_open()
        if self.tag is not None:
            raise ReadOnlyError(
                f"{self.label} is read at tag '{self.tag}', which is read-only; {action} needs the live database"
            )
        if self.read_only:
            raise ReadOnlyError(f"{self.label} is open read-only; {action} needs a writable store")

    @asynccontextmanager
    async def _writing(self, action: str, *, timeout_s: float | None = None) -> AsyncIterator[None]:
        self._require_writable(action)
        outermost = not self._lock.held_by_current_task()
        async with self._lock.hold(action, timeout_s):
            if outermost:
                await self._refresh_to_latest()
            yield

    def _after_write(self) -> None:
        """Called once a write committed and released the lock."""
        self._dirty = True
        self._on_written()

    def _on_written(self) -> None:
        """Hook for auto-vacuum scheduling (see maintenance)."""

    @asynccontextmanager
    async def writer_lock(self, action: str = "the write") -> AsyncIterator[None]:
        """Hold this database's writer lock across several calls (they re-enter it).

        Raises ``ReadOnlyError`` on a read-only or tagged store and
        ``DatabaseLockedError`` when the lock is not free within
        ``storage.writer_lock_timeout_s``.
        """
        async with self._writing(action):
            yield
