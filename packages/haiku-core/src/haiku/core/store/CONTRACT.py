"""THE STORE CONTRACT (temporary file: the store helper turns it into the real
``haiku.core.store`` package and deletes this file).

Other packages code against exactly these names and signatures:

    from haiku.core.store import Store, SearchType, TagInfo

All methods are async unless marked sync. A Store is one open LanceDB database.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from haiku.core.config import AppConfig
from haiku.core.embedders import EmbedderIdentity
from haiku.core.models import Chunk, Document, SearchResult
from haiku.core.scope import DatabaseRef

SearchType = Literal["vector", "fts", "hybrid"]
STORE_SCHEMA_VERSION: int  # current version; see haiku.core.store.migrations.MIGRATIONS


@dataclass
class TagInfo:
    name: str
    versions: dict[str, int]            # table -> version, for the tables carrying it
    missing: list[str] = field(default_factory=list)  # tables not carrying it (partial tag)

    @property
    def complete(self) -> bool: ...


@dataclass
class HistoryEntry:
    version: int
    timestamp: datetime
    tags: list[str]


class Store:
    # --- identity (sync properties) -------------------------------------------------
    ref: DatabaseRef
    name: str | None            # ref.name; None only for the legacy lancedb.uri database
    location: Path | str
    read_only: bool             # True also when opened at a tag
    tag: str | None
    identity: EmbedderIdentity | None   # recorded embedder identity
    schema_version: int

    @classmethod
    async def open(
        cls,
        ref: DatabaseRef,
        config: AppConfig,
        *,
        create: bool = False,
        read_only: bool = False,
        tag: str | None = None,          # overrides/joins ref.tag (ref.tag wins; both -> error in scope)
        skip_validation: bool = False,   # skips migration check and identity check
    ) -> Store:
        """SPEC §3.2, §3.3, §6, §7, §8.1, §8.3.

        Raises for a configured (not given) ref: SourceUnavailableError (missing; or any unexpected
        failure, raised OUTSIDE the except block so __cause__/__context__ are None), and
        MigrationRequiredError / ConfigMismatchError / ReadOnlyError / TagError / DatabaseLockedError
        with the message prefixed "database 'NAME': ". For a given path: FileNotFoundError
        "Database does not exist at /abs/path; use 'haiku-rag init' ..." and other errors unchanged.
        create=True creates parents and stamps settings (identity from config.embeddings.model,
        current schema version, created_at).
        """

    async def close(self) -> None: ...  # idempotent; runs the on-close auto-vacuum if anything was written

    @staticmethod
    async def exists(ref: DatabaseRef, config: AppConfig) -> bool: ...  # has haiku tables; opens nothing writable

    # --- reads ------------------------------------------------------------------------
    async def count_documents(self, filter: str | None = None) -> int: ...
    async def count_chunks(self) -> int: ...
    async def list_documents(
        self, limit: int | None = None, offset: int | None = None, filter: str | None = None,
        include_content: bool = False,
    ) -> list[Document]: ...  # ordered by created_at then id; source set on every Document
    async def get_document_by_id(self, document_id: str) -> Document | None: ...
    async def get_document_by_uri(self, uri: str) -> Document | None: ...
    async def get_documents_by_ids(self, ids: Sequence[str]) -> dict[str, Document]: ...
    async def get_chunk_by_id(self, chunk_id: str) -> Chunk | None: ...
    async def get_chunks(self, document_id: str) -> list[Chunk]: ...  # ordered by `order`

    async def search(
        self,
        query: str,
        *,
        query_vector: Sequence[float] | None,  # required for vector and hybrid
        search_type: SearchType = "hybrid",
        limit: int = 5,
        filter: str | None = None,             # SQL WHERE over documents (id, uri, title, metadata, created_at, updated_at)
        with_vectors: bool = False,            # fill SearchResult.vector with the stored chunk vector
    ) -> list[SearchResult]:
        """One database's native search (SPEC §11.2): vector score 1/(1+distance), fts BM25,
        hybrid = reciprocal-rank fusion of this database's vector and fts lists.
        Results are chunk-level (content, score, source, chunk_id, document_id, order, headings,
        page_numbers) with document fields (uri, title, meta) filled; chunks whose document row is
        absent are skipped. Best first."""

    async def vector_candidates(self, query_vector: Sequence[float], *, limit: int, filter: str | None = None,
                                with_vectors: bool = False) -> list[SearchResult]: ...
    async def fts_candidates(self, query: str, *, limit: int, filter: str | None = None,
                             with_vectors: bool = False) -> list[SearchResult]: ...
    # ^ the two raw lists the federating client fuses itself (scores: 1/(1+d) and BM25).

    async def enrich(self, results: list[SearchResult]) -> list[SearchResult]: ...  # fill document fields
    async def expand_context(self, results: list[SearchResult], max_chars: int) -> list[SearchResult]: ...  # SPEC §9.6, for results of this database

    # --- document writes (ingester only; each holds the writer lock) -------------------
    async def upsert_document(
        self, document: Document, chunks: Sequence[Chunk], vectors: Sequence[Sequence[float]]
    ) -> Document:
        """Same uri -> same id, chunks replaced in ONE commit; new uri -> new UUID4.
        Chunk rows are written before the document row. Returns the stored document (with id)."""
    async def update_document_metadata(self, document_id: str, metadata: dict[str, Any]) -> None: ...
    async def delete_document(self, document_id: str) -> bool: ...  # document row first, then chunks
    async def remove_orphan_chunks(self) -> int: ...
    async def iter_chunk_batches(self, batch_size: int = 256): ...  # async iterator of list[Chunk] (for rebuild)
    async def replace_vectors(self, vectors: dict[str, Sequence[float]]) -> None: ...  # chunk id -> vector (rebuild)
    async def record_identity(self, identity: EmbedderIdentity) -> None: ...

    # --- lifecycle (each holds the writer lock) ---------------------------------------
    def pending_migrations(self) -> list[tuple[int, str]]: ...  # sync
    async def migrate(self) -> list[str]: ...                  # applied "version: description" lines
    async def create_tag(self, name: str) -> TagInfo: ...
    async def list_tags(self) -> list[TagInfo]: ...
    async def delete_tag(self, name: str) -> None: ...
    async def restore_tag(self, name: str) -> str: ...          # returns the safety tag name
    async def history(self, table: str | None = None, limit: int | None = None) -> dict[str, list[HistoryEntry]]: ...
    async def vacuum(self, retention_seconds: int | None = None) -> bool: ...  # False if one already running
    async def create_index(self) -> bool: ...                   # False (+ warning) when < 256 chunks
    async def info(self) -> dict[str, Any]: ...                 # everything `haiku-rag info` prints
