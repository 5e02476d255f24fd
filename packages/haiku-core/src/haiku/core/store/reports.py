"""The shapes of what a store reports about itself: ``store.report.info()`` and ``store.indexes.index_state()``.

The index states are plain dicts, typed so a caller knows each key; the info
report is a frozen dataclass whose ``as_dict()`` is what ``haiku-rag info
--json`` prints.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict


class IndexState(TypedDict):
    """One chunk index: whether it exists and how many rows it covers."""

    exists: bool
    indexed_rows: int
    unindexed_rows: int
    type: NotRequired[str]  # the index kind, when it exists
    covers_none: NotRequired[bool]  # a populated table none of whose rows it covers
    metric: NotRequired[str | None]  # the vector index's distance, when readable


class ChunkIndexes(TypedDict):
    fts: IndexState
    vector: IndexState


class PendingMigration(TypedDict):
    version: int
    description: str


@dataclass(frozen=True)
class StoreInfo:
    """What a database reports about itself (``haiku-rag info`` adds where it is configured)."""

    name: str | None
    location: str
    tag: str | None
    read_only: bool
    schema_version: int
    current_schema_version: int
    pending_migrations: list[PendingMigration]
    embedder: dict[str, str | int] | None  # EmbedderIdentity.to_dict()
    vector_dim: int | None
    created_at: str | None  # ISO 8601
    documents: int
    chunks: int
    fts_index: IndexState
    vector_index: IndexState
    table_versions: dict[str, int]
    tags: int
    rebuild_marker: dict[str, object] | None
    processing: dict[str, Any] | None  # the recorded processing identity (docs/ingester.md, "Re-processing")

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
