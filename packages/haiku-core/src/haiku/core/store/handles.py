"""The open handles of one database and what every part reads from them (docs/storage.md).

``Handles`` owns the LanceDB connection, one table handle per table, the
settings record read on open, the facts of the stored chunk schema (vector
dimension, whether rows carry a revision), and whether the store is read-only,
read at a tag, or closed. Every other part of a ``Store`` receives it and reads
these through its public attributes; none keeps a table handle of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from haiku.core.config import AppConfig
from haiku.core.errors import database_label
from haiku.core.scope import DatabaseRef
from haiku.core.store._location import Location
from haiku.core.store.schema import (
    CHUNK_FIELDS,
    CHUNK_STRUCTURE_FIELDS,
    CHUNKS,
    DOCUMENT_FIELDS,
    DOCUMENT_ITEMS,
    DOCUMENTS,
    PAGE_IMAGES,
    PICTURE_VECTORS,
    REVISION,
    SETTINGS,
    TABLES,
    StoreSettings,
    tables_at,
    vector_dim_of,
)

if TYPE_CHECKING:  # lancedb loads on first open, keeping `import haiku.core.store` light
    from lancedb import AsyncConnection
    from lancedb.table import AsyncTable


@dataclass(eq=False)
class Handles:
    """One open database: its connection, table handles, settings record and schema facts."""

    ref: DatabaseRef
    config: AppConfig
    location: Location
    connection: AsyncConnection
    read_only: bool
    tag: str | None
    tables: dict[str, AsyncTable] = field(default_factory=dict)
    settings: StoreSettings = field(default_factory=lambda: StoreSettings(schema_version=0, identity=None))
    vector_dim: int = 0  # the stored vectors' dimension (the chunk schema's, not the configuration's)
    revisioned: bool = True  # whether rows carry the ``revision`` column (schema version 2 on)
    closed: bool = False
    # The chunks table opened at one version, for a hybrid search's two queries (see ``search``).
    pinned_chunks: tuple[int, AsyncTable] | None = None

    def __post_init__(self) -> None:
        self.read_only = self.read_only or self.tag is not None
        if not self.vector_dim:
            self.vector_dim = self.config.embeddings.model.vector_dim

    # --- naming ----------------------------------------------------------------------
    @property
    def name(self) -> str | None:
        return self.ref.name

    @property
    def where(self) -> Path | str:
        """The resolved local path, or the URI."""
        return self.location.path if self.location.path is not None else self.location.uri

    @property
    def label(self) -> str:
        """How messages name this database: by name, never by location when it has one."""
        return database_label(self.name)

    @property
    def deadline_s(self) -> float | None:
        """How long one read may take: bounded on object storage only (see ``_failures``)."""
        return None if self.location.is_local else self.config.lancedb.object_storage_timeout_s

    # --- tables ----------------------------------------------------------------------
    def table(self, name: str) -> AsyncTable:
        try:
            return self.tables[name]
        except KeyError:
            raise ValueError(f"unknown table {name!r}; the tables are {', '.join(TABLES)}") from None

    @property
    def documents(self) -> AsyncTable:
        return self.tables[DOCUMENTS]

    @property
    def chunks(self) -> AsyncTable:
        return self.tables[CHUNKS]

    @property
    def structured(self) -> bool:
        """Whether this database (at its tag) has the structure tables: schema version 3 on."""
        return DOCUMENT_ITEMS in self.tables and PAGE_IMAGES in self.tables

    @property
    def picture_vectors(self) -> AsyncTable | None:
        """The picture vectors table (schema version 4 on; at a tag taken before it, ``None``)."""
        return self.tables.get(PICTURE_VECTORS)

    def keep_tables_of(self, schema_version: int) -> None:
        """Close the handles of tables a database at ``schema_version`` does not have (a restored old tag)."""
        for name in [n for n in self.tables if n not in tables_at(schema_version)]:
            self.tables.pop(name).close()

    async def open_tables(self, names: tuple[str, ...]) -> None:
        """Open (at the tag, for a tagged read) each of ``names`` not open yet."""
        for name in names:
            if name not in self.tables:
                table = await self.connection.open_table(name)
                if self.tag is not None:
                    await table.checkout(self.tag)
                self.tables[name] = table
        self.tables = {name: self.tables[name] for name in TABLES if name in self.tables}  # in creation order

    def require_open(self) -> None:
        if self.closed:
            raise RuntimeError(f"{self.label} is closed")

    async def refresh_to_latest(self) -> None:
        """Bring every table handle to the latest version (a live store only)."""
        for table in self.tables.values():
            await table.checkout_latest()
        self.pinned_chunks = None

    async def versions(self) -> dict[str, int]:
        """The version each table handle holds now."""
        return {name: await table.version() for name, table in self.tables.items()}

    # --- the settings record ---------------------------------------------------------
    async def read_settings(self) -> StoreSettings:
        rows = await self.tables[SETTINGS].query().limit(2).to_list()
        if len(rows) != 1:
            raise RuntimeError(f"the settings table holds {len(rows)} rows, expected exactly one")
        return StoreSettings.from_row(rows[0])

    async def write_settings(self, settings: StoreSettings) -> None:
        """Replace the one settings row in a single commit (caller holds the writer lock)."""
        await self.tables[SETTINGS].add(settings.to_table(), mode="overwrite")
        self.settings = settings

    # --- the chunk schema ------------------------------------------------------------
    def note_chunk_schema(self, schema: Any) -> None:
        self.vector_dim = vector_dim_of(schema)
        self.revisioned = REVISION in schema.names

    def with_revision(self, columns: list[str]) -> list[str]:
        """``columns`` plus the revision column, when the rows carry one."""
        return [*columns, REVISION] if self.revisioned else columns

    def document_columns(self, include_content: bool = False) -> list[str]:
        return self.with_revision([*DOCUMENT_FIELDS, "content"] if include_content else list(DOCUMENT_FIELDS))

    def chunk_columns(self, with_vectors: bool = False) -> list[str]:
        fields = [*CHUNK_FIELDS, *CHUNK_STRUCTURE_FIELDS] if self.structured else list(CHUNK_FIELDS)
        return self.with_revision([*fields, "vector"] if with_vectors else fields)

    # --- closing ---------------------------------------------------------------------
    def release(self) -> None:
        """Close every handle without any further write."""
        self.closed = True
        tables, self.tables = list(self.tables.values()), {}
        self.pinned_chunks = None
        for table in tables:
            try:
                table.close()
            except Exception:  # closing handles must not mask the real outcome
                pass
        try:
            self.connection.close()
        except Exception:
            pass
