"""``Store``: one open LanceDB database (docs/storage.md, docs/configuration.md).

The store is a façade over parts with one job each, built in ``__init__``;
every public method hands its work to one of them, named in the section it
sits in (docs/design.md, "The store"). Opening is ``opening``. Every
public read is decorated with ``names_read_failures``: a read failing inside
LanceDB names the database, never its location (docs/storage.md, "How
failures are named").
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from haiku.core.config import AppConfig
from haiku.core.embedders import EmbedderIdentity
from haiku.core.models import Chunk, Document, DocumentItem, PageImage, SearchResult, SearchType
from haiku.core.scope import DatabaseRef
from haiku.core.store._failures import names_read_failures
from haiku.core.store.fulltext import FullTextStats, TermStatistics
from haiku.core.store.gate import Commits, WriteGate
from haiku.core.store.indexes import Indexes
from haiku.core.store.info import InfoReport
from haiku.core.store.maintenance import Maintenance, VacuumReport
from haiku.core.store.migrations import Migrator
from haiku.core.store.opening import OpenedDatabase, database_reachable_and_exists, open_database
from haiku.core.store.orphans import Orphans
from haiku.core.store.picture_rebuild import PictureKey, PictureRebuild
from haiku.core.store.picture_search import PictureSearch
from haiku.core.store.processing import ProcessingRecord
from haiku.core.store.reads import Reads
from haiku.core.store.rebuild import Rebuild
from haiku.core.store.reports import ChunkIndexes, StoreInfo
from haiku.core.store.search import Boosts, Search
from haiku.core.store.structure_reads import StructureReads
from haiku.core.store.tags import History, TagInfo, Tags
from haiku.core.store.word_stats import WordStatsKeeper
from haiku.core.store.writes import DocumentWrite, Writes

if TYPE_CHECKING:
    from lancedb import AsyncConnection
    from lancedb.table import AsyncTable


class Store:
    """One open database. Use ``await Store.open(ref, config)``; close with ``await store.close()``."""

    def __init__(self, opened: OpenedDatabase) -> None:
        handles, gate = opened.handles, WriteGate(opened.handles, opened.lock)
        self.handles, self.gate = handles, gate
        self.created = opened.created  # True when this open created the database
        self.reads = Reads(handles)
        self.structure = StructureReads(handles)
        self.searcher = Search(handles, self.reads)
        self.pictures = PictureSearch(handles, self.reads, self.structure)
        self.fulltext = FullTextStats(handles)
        self.indexes = Indexes(handles, gate)
        self.orphans = Orphans(handles, gate)
        self.writes = Writes(handles, gate, self.indexes, self.orphans)
        self.rebuild = Rebuild(handles, gate, self.indexes, self.orphans)
        self.picture_rebuild = PictureRebuild(handles, gate)
        self.maintenance = Maintenance(handles, gate, self.indexes)
        self.word_stats = WordStatsKeeper(handles)
        gate.on_written = self._written
        gate.on_commits.append(self.word_stats.after_commits)
        self.tags = Tags(handles, gate)
        self.processing = ProcessingRecord(handles, gate)
        self.migrator = Migrator(handles, gate, self)
        self.report = InfoReport(handles, self.reads, self.indexes, self.tags, self.migrator)

    # --- opening and closing --------------------------------------------------------
    @classmethod
    async def open(
        cls,
        ref: DatabaseRef,
        config: AppConfig,
        *,
        create: bool = False,
        read_only: bool = False,
        tag: str | None = None,
        skip_validation: bool = False,
    ) -> Store:
        """Open one database (see ``haiku.core.store.opening``)."""
        opened = await open_database(
            ref, config, create=create, read_only=read_only, tag=tag, skip_validation=skip_validation
        )
        return cls(opened)

    @staticmethod
    async def exists(ref: DatabaseRef, config: AppConfig) -> bool:
        """Whether ``ref`` holds a haiku database; creates and opens nothing writable."""
        return await database_reachable_and_exists(ref, config)

    async def close(self) -> None:
        """Close; a store that wrote anything maintains itself first, bounded (``storage.auto_vacuum``). Idempotent."""
        if self.handles.closed:
            return
        await self.maintenance.before_close()
        await self.word_stats.settle()  # brought to the last commit, the closing maintenance's included
        self.handles.release()

    def _written(self) -> None:
        """After a committed write: the auto-maintenance's turn (``maintenance``).

        A store that writes stops keeping its document rows in memory (``reads``).
        """
        self.reads.kept_rows.stop()
        self.maintenance.after_write()

    def tell_commits(self, listener: Callable[[Commits], None]) -> None:
        """Have ``listener`` told, before the writer lock is released, of the commits made under each hold of it.

        ``{table: (version before, version after)}``, the first read fresh
        when the lock was taken (see ``gate``): whatever committed (a write,
        auto-maintenance, a vacuum, a rebuild, a restore), from this store.
        """
        self.gate.on_commits.append(listener)

    async def __aenter__(self) -> Store:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    def __repr__(self) -> str:
        at = f" at tag {self.tag!r}" if self.tag else ""
        mode = "read-only" if self.read_only else "writable"
        return f"<Store {self.name!r}{at} {mode}>"

    # --- identity (``handles``) -----------------------------------------------------
    @property
    def ref(self) -> DatabaseRef:
        return self.handles.ref

    @property
    def config(self) -> AppConfig:
        return self.handles.config

    @property
    def name(self) -> str | None:
        return self.handles.name

    @property
    def tag(self) -> str | None:
        return self.handles.tag

    @property
    def read_only(self) -> bool:
        return self.handles.read_only

    @property
    def location(self) -> Path | str:
        """The resolved local path, or the URI."""
        return self.handles.where

    @property
    def identity(self) -> EmbedderIdentity | None:
        return self.handles.settings.identity

    @property
    def schema_version(self) -> int:
        return self.handles.settings.schema_version

    @property
    def vector_dim(self) -> int:
        """The dimension of the stored vectors (the chunk schema's, not the configuration's)."""
        return self.handles.vector_dim

    @property
    def rebuild_marker(self) -> dict | None:
        """What an unfinished ``haiku-ingester rebuild`` left in the settings, if anything."""
        return self.handles.settings.rebuild_marker

    @property
    def processing_identity(self) -> dict[str, Any] | None:
        """How the stored documents were converted and chunked, as recorded (``ProcessingRecord``)."""
        return self.processing.identity

    @property
    def closed(self) -> bool:
        return self.handles.closed

    @property
    def label(self) -> str:
        """How messages name this database: by name, never by location when it has one."""
        return self.handles.label

    @property
    def connection(self) -> AsyncConnection:
        return self.handles.connection

    def table(self, name: str) -> AsyncTable:
        return self.handles.table(name)

    @asynccontextmanager
    async def writer_lock(self, action: str = "the write") -> AsyncIterator[None]:
        """Hold this database's writer lock across several calls (they re-enter it).

        Raises ``ReadOnlyError`` on a read-only or tagged store and
        ``DatabaseLockedError`` when the lock is not free within
        ``storage.writer_lock_timeout_s``.
        """
        async with self.gate.writing(action):
            yield

    # --- search (``searcher``, ``fulltext``) ------------------------------------
    @names_read_failures
    async def search(
        self, query: str, *, query_vector: Sequence[float] | None = None, search_type: SearchType = "hybrid",
        limit: int = 5, filter: str | None = None, with_vectors: bool = False, enrich: bool = True,
    ) -> list[SearchResult]:  # fmt: skip
        """This database's native search, best first (see ``Search.search``)."""
        return await self.searcher.search(
            query, query_vector=query_vector, search_type=search_type, limit=limit, filter=filter,
            with_vectors=with_vectors, enrich=enrich,
        )  # fmt: skip

    @names_read_failures
    async def vector_candidates(
        self, query_vector: Sequence[float], *, limit: int, filter: str | None = None,
        with_vectors: bool = False, enrich: bool = True,
    ) -> list[SearchResult]:  # fmt: skip
        """Nearest chunks by vector (see ``Search.vector_candidates``)."""
        return await self.searcher.vector_candidates(
            query_vector, limit=limit, filter=filter, with_vectors=with_vectors, enrich=enrich
        )

    @names_read_failures
    async def fts_candidates(
        self, query: str, *, limit: int, filter: str | None = None, with_vectors: bool = False,
        enrich: bool = True, boosts: Boosts | None = None,
    ) -> list[SearchResult]:  # fmt: skip
        """Full-text matches scored by BM25 (see ``Search.fts_candidates``)."""
        return await self.searcher.fts_candidates(
            query, limit=limit, filter=filter, with_vectors=with_vectors, enrich=enrich, boosts=boosts
        )

    @names_read_failures
    async def hybrid_candidates(
        self, query: str, query_vector: Sequence[float], *, limit: int, filter: str | None = None,
        with_vectors: bool = False, enrich: bool = True, fts_boosts: Boosts | None = None,
    ) -> tuple[list[SearchResult], list[SearchResult]]:  # fmt: skip
        """The vector and full-text lists of a hybrid search (see ``Search.hybrid_candidates``)."""
        return await self.searcher.hybrid_candidates(
            query, query_vector, limit=limit, filter=filter, with_vectors=with_vectors, enrich=enrich,
            fts_boosts=fts_boosts,
        )  # fmt: skip

    @names_read_failures
    async def picture_candidates(
        self, image_vector: Sequence[float], *, limit: int, with_vectors: bool = False, enrich: bool = True
    ) -> list[SearchResult]:
        """The chunks holding the stored pictures nearest an image's vector (see ``PictureSearch``)."""
        found = await self.pictures.picture_candidates(image_vector, limit=limit, with_vectors=with_vectors)
        return await self.searcher.enrich(found) if enrich else found

    @names_read_failures
    async def count_picture_vectors(self) -> int:
        """How many stored pictures have a vector (0 for a database written by a text-only embedder)."""
        return await self.pictures.count_picture_vectors()

    @names_read_failures
    async def enrich(self, results: list[SearchResult]) -> list[SearchResult]:
        """Fill each result's document fields; drop results that are not current (orphans)."""
        return await self.searcher.enrich(results)

    @names_read_failures
    async def expand_context(self, results: list[SearchResult], max_chars: int) -> list[SearchResult]:
        """Grow each result within its section, table or picture, or with neighbouring chunks of its
        document where no structure is stored (see ``Search.expand_context``)."""
        return await self.searcher.expand_context(results, max_chars, self.get_document_items)

    @names_read_failures
    async def fts_statistics(self, words: Iterable[str]) -> TermStatistics:
        """The chunk count and each word's chunk frequency (see ``FullTextStats.fts_statistics``)."""
        return await self.fulltext.fts_statistics(words)

    # --- reads (``reads``) ----------------------------------------------------------
    @names_read_failures
    async def list_documents(
        self, limit: int | None = None, offset: int | None = None, filter: str | None = None,
        include_content: bool = False,
    ) -> list[Document]:  # fmt: skip
        """Documents ordered by creation time, then id; ``source`` set on each."""
        return await self.reads.list_documents(limit, offset, filter, include_content)

    @names_read_failures
    async def count_documents(self, filter: str | None = None) -> int:
        return await self.reads.count_documents(filter)

    @names_read_failures
    async def count_chunks(self) -> int:
        return await self.reads.count_chunks()

    @names_read_failures
    async def count_orphan_chunks(self) -> int:
        """Chunks no reader shows; the next write removes them."""
        return await self.reads.count_orphan_chunks()

    @names_read_failures
    async def get_document_by_id(self, document_id: str) -> Document | None:
        return await self.reads.get_document_by_id(document_id)

    @names_read_failures
    async def get_document_by_uri(self, uri: str) -> Document | None:
        return await self.reads.get_document_by_uri(uri)

    @names_read_failures
    async def get_documents_by_ids(self, ids: Sequence[str]) -> dict[str, Document]:
        return await self.reads.get_documents_by_ids(ids)

    @names_read_failures
    async def get_chunk_by_id(self, chunk_id: str, *, with_vector: bool = False) -> Chunk | None:
        return await self.reads.get_chunk_by_id(chunk_id, with_vector=with_vector)

    @names_read_failures
    async def chunk_counts(self, document_ids: Sequence[str]) -> dict[str, int]:
        """Each document's current chunks counted, in one read; an absent id is left out."""
        return await self.reads.chunk_counts(document_ids)

    @names_read_failures
    async def get_chunks(self, document_id: str, *, with_vectors: bool = False) -> list[Chunk]:
        """The document's current chunks by ``order``; none when the document row is absent."""
        return await self.reads.get_chunks(document_id, with_vectors=with_vectors)

    # --- structure (``structure``) ---------------------------------------------------
    @names_read_failures
    async def has_structure(self, document_id: str) -> bool:
        """Whether the document has stored items, in any format (see ``StructureReads``)."""
        return await self.structure.has_structure(document_id)

    @names_read_failures
    async def has_page_layout(self, document_id: str) -> bool:
        """Whether the document's items are placed on pages: a PDF (see ``StructureReads``)."""
        return await self.structure.has_page_layout(document_id)

    @names_read_failures
    async def get_document_items(self, document_id: str) -> list[DocumentItem]:
        """The document's items (headings, paragraphs, tables, pictures…) in document order."""
        return await self.structure.get_document_items(document_id)

    @names_read_failures
    async def get_picture_bytes(self, document_id: str, self_ref: str) -> bytes:
        """A picture item's PNG; ``PictureNotFoundError`` when the document or picture is not stored."""
        return await self.structure.get_picture_bytes(document_id, self_ref)

    @names_read_failures
    async def get_page_images(self, document_id: str, pages: Sequence[int]) -> dict[int, PageImage]:
        """The stored images of the given pages (1-based), by page; pages without one are left out."""
        return await self.structure.get_page_images(document_id, pages)

    @names_read_failures
    async def get_docling_document(self, document_id: str) -> tuple[dict[str, Any], str] | None:
        """The stored docling document (its JSON object) and the docling version that made it, if any."""
        return await self.structure.get_docling_document(document_id)

    # --- writes (``writes``, ``orphans``, ``rebuild``) -----------------------------
    async def upsert_document(
        self, document: Document, chunks: Sequence[Chunk], vectors: Sequence[Sequence[float]]
    ) -> Document:
        """Write a document and replace its chunks; returns the stored document (``Writes``)."""
        return await self.writes.upsert_document(document, chunks, vectors)

    async def upsert_documents(self, items: Sequence[DocumentWrite]) -> list[Document]:
        """Write several documents and replace their chunks, in three commits for the lot (``Writes``)."""
        return await self.writes.upsert_documents(items)

    async def load_documents(
        self, items: Iterable[DocumentWrite], *, batch_size: int = 1024,
        progress: Callable[[int], None] | None = None,
    ) -> int:  # fmt: skip
        """Write many documents fast; returns how many were written (``Writes.load_documents``)."""
        return await self.writes.load_documents(items, batch_size=batch_size, progress=progress)

    async def update_document_metadata(self, document_id: str, metadata: dict[str, Any]) -> bool:
        """Replace a document's metadata (content and chunks untouched); ``False`` if it is absent."""
        return await self.writes.update_document_metadata(document_id, metadata)

    async def delete_document(self, document_id: str) -> int | None:
        """Remove the document row, then its chunks: how many chunks went; ``None`` if it was absent."""
        return await self.writes.delete_document(document_id)

    async def remove_orphan_chunks(self) -> int:
        """Delete chunks that are not current; returns how many (``Orphans``)."""
        return await self.orphans.remove_orphan_chunks()

    def iter_chunk_batches(self, batch_size: int = 256, *, with_vectors: bool = False) -> AsyncIterator[list[Chunk]]:
        """Every chunk whose document exists, in batches, ordered by document then order (``Rebuild``)."""
        return self.rebuild.iter_chunk_batches(batch_size, with_vectors=with_vectors)

    async def replace_vectors(self, vectors: dict[str, Sequence[float]]) -> None:
        """Replace stored vectors by chunk id (``Rebuild.replace_vectors``)."""
        await self.rebuild.replace_vectors(vectors)

    def iter_pictures(self, batch_size: int = 16) -> AsyncIterator[list[tuple[PictureKey, bytes]]]:
        """Every current stored picture's PNG, by (document id, ref), in batches (see ``PictureRebuild``)."""
        return self.picture_rebuild.iter_pictures(batch_size)

    async def replace_picture_vectors(self, vectors: dict[PictureKey, Sequence[float]], vector_dim: int) -> int:
        """Replace every picture vector in one commit; none empties the table (see ``PictureRebuild``)."""
        return await self.picture_rebuild.replace_picture_vectors(vectors, vector_dim)

    async def record_identity(self, identity: EmbedderIdentity) -> None:
        """Record the embedder the stored vectors come from."""
        await self.rebuild.record_identity(identity)

    async def record_processing(self, identity: dict[str, Any]) -> None:
        """Record the processing identity (a JSON object) in one settings commit (``ProcessingRecord``)."""
        await self.processing.record(identity)

    async def set_rebuild_marker(self, marker: dict[str, Any] | None) -> None:
        """Leave (a dict) or clear (``None``) the marker of a rebuild in progress."""
        await self.rebuild.set_rebuild_marker(marker)

    # --- indexes, vacuum, migrations (``indexes``, ``maintenance``, ``migrator``) ---
    async def create_index(self) -> bool:
        """Build (or replace) the IVF-SQ vector index; ``False`` with a warning under 256 chunks."""
        return await self.indexes.create_index()

    async def index_state(self) -> ChunkIndexes:
        """What ``info`` and ``doctor`` report about the chunk indexes."""
        return await self.indexes.index_state()

    async def vacuum(
        self, retention_seconds: int | None = None, *, lock_timeout_s: float | None = None
    ) -> VacuumReport | None:
        """Compact, optimise indexes and drop old untagged versions (``Maintenance.vacuum``).

        It returns once the word statistics follow the new version (``word_stats``).
        """
        report = await self.maintenance.vacuum(retention_seconds, lock_timeout_s=lock_timeout_s)
        await self.word_stats.settle()
        return report

    def pending_migrations(self) -> list[tuple[int, str]]:
        """``(version, description)`` of every step above the recorded version."""
        return self.migrator.pending_migrations()

    async def migrate(self) -> list[str]:
        """Apply pending steps in order; returns ``"version: description"`` per step applied."""
        return await self.migrator.migrate()

    # --- tags and history (``tags``) ------------------------------------------------
    async def tag_info(self, name: str) -> TagInfo | None:
        """The tag's versions per table, or ``None`` when no table carries it."""
        return await self.tags.tag_info(name)

    async def list_tags(self) -> list[TagInfo]:
        """Every tag by name, with its table versions and any tables missing it."""
        return await self.tags.list_tags()

    async def create_tag(self, name: str) -> TagInfo:
        """Tag the current version of every table with ``name``."""
        return await self.tags.create_tag(name)

    async def delete_tag(self, name: str) -> None:
        """Remove the tag from every table carrying it."""
        await self.tags.delete_tag(name)

    async def restore_tag(self, name: str) -> str:
        """Make the tagged state the latest version of every table; returns the safety tag (``Tags``)."""
        return await self.tags.restore_tag(name)

    async def history(self, table: str | None = None, limit: int | None = None) -> History:
        """Per table, versions newest first, each with the tags pointing at it."""
        return await self.tags.history(table, limit)

    # --- info (``report``) -----------------------------------------------------------
    @names_read_failures
    async def info(self) -> StoreInfo:
        """Everything ``haiku-rag info`` reports about this database."""
        return await self.report.info()
