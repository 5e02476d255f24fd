"""The schema-version registry and the step runner (docs/storage.md, "Migrations").

Version 1 is the initial schema. Each later change to the stored layout adds a
``Migration`` to ``MIGRATIONS``; a database whose settings record a lower
version has that step pending. Opening never applies a step: ``Store.migrate``
(``Migrator.migrate``) does, under the writer lock, moving the recorded version
forward one step at a time so an interrupted migration resumes where it stopped.

``MIGRATIONS`` is a plain module-level list so tests (and future code) can
append steps; it is read at call time, never cached.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from haiku.core.logs import get_logger

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
    """

    version: int
    description: str
    apply: Callable[[Any], Awaitable[None]]  # receives the ``Store`` (a ``MigratingStore``)

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


MIGRATIONS: list[Migration] = [
    Migration(
        2,
        "documents and chunks carry a revision, so a crash mid-update never shows half a document",
        _add_revisions,
    ),
]


def current_schema_version() -> int:
    """The version a database created by this code is stamped with."""
    return max([BASE_SCHEMA_VERSION, *(step.version for step in MIGRATIONS)])


def pending_migrations(stored_version: int) -> list[Migration]:
    """Steps above ``stored_version``, in the ascending order they apply in."""
    return sorted((step for step in MIGRATIONS if step.version > stored_version), key=lambda s: s.version)


def migration_required_message(stored_version: int, steps: list[Migration]) -> str:
    return (
        f"Database requires migration from {stored_version} to {steps[-1].version}. "
        f"{len(steps)} migration(s) pending. Run 'haiku-rag migrate' to upgrade."
    )


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
