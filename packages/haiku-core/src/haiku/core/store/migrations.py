"""The schema-version registry and the step runner (docs/storage.md, "Migrations").

Version 1 is the initial schema. Each later change to the stored layout adds a
``Migration`` to ``MIGRATIONS``; a database whose settings record a lower
version has that step pending. Opening never applies a step:
``store.migrator.migrate()`` (``Migrator.migrate``) does, under the writer
lock, moving the recorded version forward one step at a time so an
interrupted migration resumes where it stopped.

``MIGRATIONS`` is a plain module-level list so tests (and future code) can
append steps; it is read at call time, never cached.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from haiku.core.errors import Hint
from haiku.core.logs import get_logger
from haiku.core.store.schema import tables_at

if TYPE_CHECKING:
    from lancedb import AsyncConnection
    from lancedb.table import AsyncTable

    from haiku.core.store.gate import WriteGate
    from haiku.core.store.handles import Handles

log = get_logger("haiku.core.store")

BASE_SCHEMA_VERSION = 1


class MigratingStore(Protocol):
    """What a step may use of the store it migrates (a ``Store`` is one)."""

    @property
    def connection(self) -> AsyncConnection: ...

    def table(self, name: str) -> AsyncTable: ...


@dataclass(frozen=True)
class Migration:
    """One step: brings a database from ``version - 1`` (or lower) up to ``version``.

    ``apply`` receives the writable store, with its writer lock held; it may use
    ``store.connection`` and ``store.table(name)`` to rewrite tables.
    ``tag_readable``: a tag taken before this step can still be read (read-only)
    by this code, since the step only added what such a tag reads as absent.
    """

    version: int
    description: str
    apply: Callable[[Any], Awaitable[None]]  # receives the ``Store`` (a ``MigratingStore``)
    tag_readable: bool = False

    def describe(self) -> str:
        return f"{self.version}: {self.description}"


async def _add_revisions(store: MigratingStore) -> None:
    """Add the ``revision`` column (null on every existing row) to documents and chunks.

    Resumable: a table that already has the column (an interrupted run) is left as it is.
    """
    from haiku.core.store.schema import CHUNKS, DOCUMENTS, REVISION

    for name in (DOCUMENTS, CHUNKS):
        table = store.table(name)
        if REVISION not in (await table.schema()).names:
            await table.add_columns({REVISION: "CAST(NULL AS STRING)"})


async def _add_structure(store: MigratingStore) -> None:
    """Add the structure columns (null on every existing row) and create the two structure tables.

    Resumable: columns already there are left as they are. The structure
    tables are created empty, or emptied when an earlier run (or a tag restored
    from before this step) left rows no document row points at.
    """
    from haiku.core.store.schema import (
        CHUNKS,
        DOCUMENT_ITEMS,
        DOCUMENTS,
        PAGE_IMAGES,
        chunk_structure_fields,
        document_items_schema,
        document_structure_fields,
        page_images_schema,
    )

    for name, fields in ((DOCUMENTS, document_structure_fields()), (CHUNKS, chunk_structure_fields())):
        table = store.table(name)
        present = set((await table.schema()).names)
        missing = [f for f in fields if f.name not in present]
        if missing:
            await table.add_columns(missing)
    for name, schema in ((DOCUMENT_ITEMS, document_items_schema()), (PAGE_IMAGES, page_images_schema())):
        table = await store.connection.create_table(name, schema=schema, exist_ok=True)
        try:
            if await table.count_rows():
                await table.delete("true")
        finally:
            table.close()


async def _add_picture_vectors(store: MigratingStore) -> None:
    """Create the picture vectors table at the stored vector dimension, empty.

    Resumable: a table an earlier run created is kept, emptied of any rows (no
    picture of a database before this step was embedded as an image). Pictures
    get vectors when their documents are next written by a multimodal
    embedder, or by ``haiku-ingester rebuild``.
    """
    from haiku.core.store.schema import CHUNKS, PICTURE_VECTORS, picture_vectors_schema, vector_dim_of

    dim = vector_dim_of(await store.table(CHUNKS).schema())
    table = await store.connection.create_table(PICTURE_VECTORS, schema=picture_vectors_schema(dim), exist_ok=True)
    try:
        if await table.count_rows():
            await table.delete("true")
    finally:
        table.close()


MIGRATIONS: list[Migration] = [
    Migration(
        2,
        "documents and chunks carry a revision, so a crash mid-update never shows half a document",
        _add_revisions,
    ),
    Migration(
        3,
        "documents keep their converted structure, items and page images; settings a processing identity",
        _add_structure,
        tag_readable=True,
    ),
    Migration(
        4,
        "stored pictures keep a vector from a multimodal embedder, for image queries",
        _add_picture_vectors,
        tag_readable=True,
    ),
]


def current_schema_version() -> int:
    """The version a database created by this code is stamped with."""
    return max([BASE_SCHEMA_VERSION, *(step.version for step in MIGRATIONS)])


def pending_migrations(stored_version: int) -> list[Migration]:
    """Steps above ``stored_version``, in the ascending order they apply in."""
    return sorted((step for step in MIGRATIONS if step.version > stored_version), key=lambda s: s.version)


def migration_required_message(stored_version: int, steps: list[Migration]) -> str:
    return f"Database requires migration from {stored_version} to {steps[-1].version}. {len(steps)} migration(s) pending."


# What to do about pending migrations, as a front end may word it its own way (haiku.core.errors).
MIGRATE_HINT = Hint("migrate", "Migrate it (store.migrator.migrate()) to upgrade.", joiner=" ")


class Migrator:
    """Lists and applies the pending steps of one database."""

    def __init__(self, handles: Handles, gate: WriteGate, store: MigratingStore) -> None:
        self.handles = handles
        self.gate = gate
        self.store = store  # what each step receives

    def pending_migrations(self) -> list[tuple[int, str]]:
        """``(version, description)`` of every step above the recorded version."""
        return [(step.version, step.description) for step in pending_migrations(self.handles.settings.schema_version)]

    async def migrate(self) -> list[str]:
        """Apply pending steps in order; returns ``"version: description"`` per step applied."""
        handles = self.handles
        applied: list[str] = []
        async with self.gate.writing("migrate"):
            settings = await handles.read_settings()
            handles.settings = settings
            for step in pending_migrations(settings.schema_version):
                log.info("store.migration_applying", database=handles.name, version=step.version)
                await step.apply(self.store)
                await handles.open_tables(tables_at(step.version))
                await handles.refresh_to_latest()
                current = await handles.read_settings()
                await handles.write_settings(
                    replace(current, schema_version=max(step.version, current.schema_version))
                )
                applied.append(step.describe())
            handles.note_chunk_schema(await handles.chunks.schema())
        if applied:
            self.gate.written()
        return applied
