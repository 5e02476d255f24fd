"""What ``haiku-rag info`` reports about one database (docs/storage.md, "`info`")."""

from __future__ import annotations

from haiku.core.store._failures import names_read_failures
from haiku.core.store.handles import Handles
from haiku.core.store.indexes import Indexes
from haiku.core.store.migrations import Migrator, current_schema_version
from haiku.core.store.reads import Reads
from haiku.core.store.reports import StoreInfo
from haiku.core.store.tags import Tags


class InfoReport:
    """Gathers ``StoreInfo`` from the parts that know each figure."""

    def __init__(self, handles: Handles, reads: Reads, indexes: Indexes, tags: Tags, migrator: Migrator) -> None:
        self.handles = handles
        self.reads = reads
        self.indexes = indexes
        self.tags = tags
        self.migrator = migrator

    @names_read_failures
    async def info(self) -> StoreInfo:
        handles = self.handles
        handles.require_open()
        indexes = await self.indexes.index_state()
        tags = await self.tags.list_tags()
        settings = handles.settings
        return StoreInfo(
            name=handles.name,
            location=str(handles.where),
            tag=handles.tag,
            read_only=handles.read_only,
            schema_version=settings.schema_version,
            current_schema_version=current_schema_version(),
            pending_migrations=[{"version": v, "description": d} for v, d in self.migrator.pending_migrations()],
            embedder=settings.identity.to_dict() if settings.identity else None,
            vector_dim=handles.vector_dim,
            created_at=settings.created_at.isoformat() if settings.created_at is not None else None,
            documents=await self.reads.count_documents(),
            chunks=await self.reads.count_chunks(),
            fts_index=indexes["fts"],
            vector_index=indexes["vector"],
            table_versions={name: await table.version() for name, table in handles.tables.items()},
            tags=len(tags),
            rebuild_marker=settings.rebuild_marker,
            processing=settings.processing,
        )
