"""One covered database's lifecycle through a client (docs/client.md, "One-database operations").

``client.database(name)`` hands out a ``Database``: vacuum, migrations, the
vector index, tags, history and ``info`` act on that one database through its
open store, under its writer lock where they write. Document writes are not
among them: those belong to the ingester (docs/design.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from haiku.core.errors import AmbiguousDatabaseError
from haiku.rag.client._diagnostics import DatabaseInfo, database_info

if TYPE_CHECKING:
    from haiku.core.scope import DatabaseRef
    from haiku.core.store import History, Store, TagInfo, VacuumReport
    from haiku.rag.client._federation import Reach


class Database:
    """The one-database verbs of a client; ``name`` picks a database of a set (checked now, opened on use)."""

    def __init__(self, reach: Reach, name: str | None) -> None:
        self._reach = reach
        self._name = name
        if name is not None:
            reach.refs([name])

    def _ref(self, operation: str) -> DatabaseRef:
        covered = self._reach.covered
        if self._name is None:
            if covered.covers_multiple:
                raise AmbiguousDatabaseError.client_needs_one(operation, covered.names)
            return covered.databases[0]
        return self._reach.refs([self._name])[0]

    async def _store(self, operation: str) -> Store:
        ref = self._ref(operation)
        return (await self._reach.federation().members([ref]))[0].store

    async def vacuum(self, retention_seconds: int | None = None) -> VacuumReport | None:
        """What was removed (``versions_removed``, ``bytes_removed``); ``None`` if a vacuum was already running."""
        return await (await self._store("vacuum")).vacuum(retention_seconds)

    async def migrate(self) -> list[str]:
        """Apply the pending schema steps; ``"version: description"`` per step applied."""
        return await (await self._store("migrate")).migrator.migrate()

    async def create_index(self) -> bool:
        """Build the vector index; ``False`` with a warning when there are too few chunks."""
        return await (await self._store("create_index")).indexes.create_index()

    async def create_tag(self, name: str) -> TagInfo:
        return await (await self._store("create_tag")).tags.create_tag(name)

    async def list_tags(self) -> list[TagInfo]:
        return await (await self._store("list_tags")).tags.list_tags()

    async def delete_tag(self, name: str) -> None:
        await (await self._store("delete_tag")).tags.delete_tag(name)

    async def restore_tag(self, name: str) -> str:
        """Make the tagged state the latest; returns the safety tag taken first."""
        return await (await self._store("restore_tag")).tags.restore_tag(name)

    async def history(self, table: str | None = None, limit: int | None = None) -> History:
        """Per table, versions newest first with their tags, and notices of what could not be read."""
        return await (await self._store("history")).tags.history(table, limit)

    async def info(self) -> DatabaseInfo:
        """Where the database is, its schema, embedder, counts, indexes, versions and tags."""
        return await database_info(await self._store("info"), self._ref("info"))
