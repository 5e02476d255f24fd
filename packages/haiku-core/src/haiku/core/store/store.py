"""``Store``: one open LanceDB database (docs/storage.md, docs/configuration.md).

The store publishes parts with one job each, built in ``__init__``: ``reads``
(documents and chunks), ``structure`` (items, pictures, pages), ``tags``
(tags and history), ``indexes``, ``migrator``, ``maintenance``, ``report``
(``info``), and the search parts behind the search methods below. A caller
uses a part directly: ``await store.reads.list_documents()``. The parts that
write documents sit behind ``writer()``, which a read-only or tagged store
refuses (``haiku.core.store.writer``; docs/design.md, "The store"). Opening
is ``opening``. Every public read is decorated with ``names_read_failures``:
a read failing inside LanceDB names the database, never its location
(docs/storage.md, "How failures are named").
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from haiku.core.config import AppConfig
from haiku.core.embedders import EmbedderIdentity
from haiku.core.errors import ReadOnlyError
from haiku.core.models import SearchResult, SearchType
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
from haiku.core.store.picture_rebuild import PictureRebuild
from haiku.core.store.picture_search import PictureSearch
from haiku.core.store.processing import ProcessingRecord
from haiku.core.store.reads import Reads
from haiku.core.store.rebuild import Rebuild
from haiku.core.store.search import Boosts, Search
from haiku.core.store.structure_reads import StructureReads
from haiku.core.store.tags import Tags
from haiku.core.store.word_stats import WordStatsKeeper
from haiku.core.store.writer import StoreWriter
from haiku.core.store.writes import Writes

if TYPE_CHECKING:
    from lancedb import AsyncConnection
    from lancedb.table import AsyncTable


class Store:
    """One open database. Use ``await Store.open(ref, config)``; close with ``await store.close()``."""

    def __init__(self, opened: OpenedDatabase, *, writes_documents: bool = True) -> None:
        handles, gate = opened.handles, WriteGate(opened.handles, opened.lock)
        self.writes_documents = writes_documents
        self.handles, self.gate = handles, gate
        self.created = opened.created  # True when this open created the database
        self.reads = Reads(handles)
        self.structure = StructureReads(handles)
        self.searcher = Search(handles, self.reads)
        self.pictures = PictureSearch(handles, self.reads, self.structure)
        self.fulltext = FullTextStats(handles)
        self.indexes = Indexes(handles, gate)
        orphans = Orphans(handles, gate)
        self.processing = ProcessingRecord(handles, gate)
        self._writer = StoreWriter(
            documents=Writes(handles, gate, self.indexes, orphans),
            orphans=orphans,
            rebuild=Rebuild(handles, gate, self.indexes, orphans),
            pictures=PictureRebuild(handles, gate),
            processing=self.processing,
        )
        self.maintenance = Maintenance(handles, gate, self.indexes)
        self.word_stats = WordStatsKeeper(handles)
        gate.on_written = self._written
        gate.on_commits.append(self.word_stats.after_commits)
        self.tags = Tags(handles, gate)
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
        writes_documents: bool = True,
    ) -> Store:
        """Open one database (see ``haiku.core.store.opening``).

        ``writes_documents=False`` opens it for reads and lifecycle work only (vacuum,
        tags, migrations, the index): its ``writer()`` is refused even when writable.
        """
        opened = await open_database(
            ref, config, create=create, read_only=read_only, tag=tag, skip_validation=skip_validation
        )
        return cls(opened, writes_documents=writes_documents)

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
        return await self.searcher.expand_context(results, max_chars, self.structure.get_document_items)

    @names_read_failures
    async def fts_statistics(self, words: Iterable[str]) -> TermStatistics:
        """The chunk count and each word's chunk frequency (see ``FullTextStats.fts_statistics``)."""
        return await self.fulltext.fts_statistics(words)

    # --- the writer, and the one verb that spans parts ----------------------------
    def writer(self, action: str = "writing documents") -> StoreWriter:
        """The parts that write documents and chunks; ``ReadOnlyError`` on a read-only or tagged
        store, and on one opened with ``writes_documents=False`` (as ``haiku-rag`` opens its own)."""
        self.gate.require_writable(action)
        if not self.writes_documents:
            raise ReadOnlyError(
                f"{self.label} is open for reads and lifecycle work only; {action} is the ingester's job"
            )
        return self._writer

    async def vacuum(
        self, retention_seconds: int | None = None, *, lock_timeout_s: float | None = None
    ) -> VacuumReport | None:
        """Compact, optimise indexes and drop old untagged versions (``Maintenance.vacuum``).

        It returns once the word statistics follow the new version (``word_stats``).
        """
        report = await self.maintenance.vacuum(retention_seconds, lock_timeout_s=lock_timeout_s)
        await self.word_stats.settle()
        return report
