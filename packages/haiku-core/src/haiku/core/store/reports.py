"""The shapes of what a store reports about itself: ``Store.info()`` and ``Store.index_state()``.

Plain dicts (they go straight to ``haiku-rag info --json``), typed so a caller
knows each key.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict


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


class StoreInfo(TypedDict):
    """Everything ``haiku-rag info`` reports about one database."""

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
