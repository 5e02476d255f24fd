"""Indexes (docs/storage.md, "Indexes").

* Scalar (BTree) indexes on ``documents.id``, ``documents.uri``, ``chunks.id``
  and ``chunks.document_id`` serve lookups and the per-document chunk
  replacement.
* A full-text index on ``chunks.search_text`` (positions kept, stop words
  kept) is built by the writer once rows exist and refreshed after writes.
* A vector index (IVF-SQ: partitions of 8-bit scalar-quantised vectors) only on
  demand through ``create_index`` (docs/storage.md gives the measured choice).

After a write, each index with rows not yet in it gets a delta: the new rows
indexed on their own, beside the index already there (LanceDB's
``optimize_indices`` with ``num_indices_to_merge=0``), so the refresh costs what
the batch costs, not what the table holds. Merging a delta into the main index
rewrites the whole index (measured at 100k chunks: 2.5 s and 35 MB for a
512-chunk batch, against 0.02 s and 20 kB for a delta), so writes never do it:
once an index has ``MAX_INDEX_DELTAS`` deltas the deltas alone are merged into
one, and ``vacuum`` merges everything into a single index again. A search
reads every delta, so their number is what the bound keeps small. An index
that covers none of a populated table's rows (every row was replaced since it
was built) is rebuilt outright.

Every write adds a data fragment, and a merge or search visits every
fragment, so after a write a table with many small fragments is compacted,
one bounded step of it (``maintenance_steps.compact_after_write``; no
versions are removed: that is vacuum's job). Without this, writes slow down
as the table grows (measured with 5-chunk documents: 60 ms per document at
150 documents, 270 ms at 600; with it, about 60 ms throughout, and vector
search at 3,000 chunks went from 220 ms to 30 ms). That compaction merges
only fragments under ``maintenance_steps.STEP_ROWS`` rows, one group of
them, so a write never rewrites the bulk of a large table, nor what earlier
writes' compactions made; ``vacuum`` compacts fully. Lance merges only
fragments that the same index parts cover, so the newest deltas are merged
first (the main part again left as it is).
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from haiku.core.logs import get_logger
from haiku.core.store.gate import WriteGate
from haiku.core.store.handles import Handles
from haiku.core.store.lance_ops import optimize_indices
from haiku.core.store.maintenance_steps import compact_after_write
from haiku.core.store.reports import ChunkIndexes, IndexState
from haiku.core.store.schema import CHUNKS, DOCUMENTS

if TYPE_CHECKING:
    from lancedb.index import FTS, BTree, IvfSq
    from lancedb.table import AsyncTable

log = get_logger("haiku.core.store")

MIN_VECTOR_INDEX_ROWS = 256
# LanceDB's optimize compacts, updates indexes and prunes old versions; pruning
# is pushed out of reach here because it refuses to run past a tagged version
# (vacuum prunes through Lance, keeping tagged versions).
NO_PRUNE = timedelta(days=365 * 100)
MAX_INDEX_DELTAS = 8


def fts_config() -> FTS:
    from lancedb.index import FTS

    return FTS(with_position=True, remove_stop_words=False)


def btree_config() -> BTree:
    from lancedb.index import BTree

    return BTree()


_WANTED: dict[str, tuple[tuple[str, Any], ...]] = {
    DOCUMENTS: (("id", btree_config), ("uri", btree_config)),
    CHUNKS: (("id", btree_config), ("document_id", btree_config), ("search_text", fts_config)),
}


async def _merge_needed(table: AsyncTable, name: str, *, full: bool) -> int | None:
    """How many of an index's parts to merge with the rows it lacks; ``None``: leave it as it is."""
    stats = await table.index_stats(name)
    if stats is None:
        return None
    parts = max(int(stats.num_indices or 1), 1)
    if full:
        return parts if (stats.num_unindexed_rows or parts > 1) else None
    if not stats.num_unindexed_rows:
        return None
    deltas = parts - 1
    return deltas if deltas >= MAX_INDEX_DELTAS else 0


class Indexes:
    """The indexes of one database: built and refreshed after writes, the vector index on demand."""

    def __init__(self, handles: Handles, gate: WriteGate) -> None:
        self.handles = handles
        self.gate = gate

    async def upkeep_after_write(
        self, tables: tuple[str, ...] = (DOCUMENTS, CHUNKS), *, load: bool = False
    ) -> None:
        """Compact fragmented tables, one bounded step each, then build or refresh indexes (caller holds the writer lock).

        After a bulk load (``load``), the steps go on until fewer small fragments are left than a write compacts.
        """
        for name in tables:
            rows = await compact_after_write(name, self.handles.tables[name])
            while load and rows and (more := await compact_after_write(name, self.handles.tables[name])):
                rows += more
            if rows:
                log.debug("store.compacted", database=self.handles.name, table=name, rows=rows)
        await self.refresh_indexes(tables)

    async def refresh_indexes(
        self, tables: tuple[str, ...] = (DOCUMENTS, CHUNKS), *, full: bool = False
    ) -> None:
        """Build missing indexes, rebuild ones covering no row, refresh stale ones.

        The caller holds the writer lock.
        """
        for name in tables:
            table = self.handles.tables[name]
            rows = await table.count_rows()
            if rows == 0:
                continue
            existing = {tuple(ix.columns): ix for ix in await table.list_indices()}
            builders = dict(_WANTED[name])
            if ("vector",) in existing and rows >= MIN_VECTOR_INDEX_ROWS:
                builders["vector"] = self._vector_index_config
            rebuilt = set()
            for column, make in builders.items():
                index = existing.get((column,))
                if index is None or (not index.num_indexed_rows and index.num_unindexed_rows):
                    await table.create_index(column, config=make(), replace=True)
                    rebuilt.add((column,))
                    log.debug("store.index_built", database=self.handles.name, table=name, column=column)
            merges: dict[int, list[str]] = {}  # parts to merge -> the indexes merging that many (one commit each)
            for columns, index in existing.items():
                if columns in rebuilt or not (full or index.num_unindexed_rows):
                    continue
                merge = await _merge_needed(table, index.name, full=full)
                if merge is not None:
                    merges.setdefault(merge, []).append(index.name)
            for merge, names in merges.items():
                await optimize_indices(table, names, merge)

    def _vector_index_config(self) -> IvfSq:
        from lancedb.index import IvfSq

        # Partitions: LanceDB's default, one per 8,192 rows. Why SQ rather than PQ: docs/storage.md.
        return IvfSq(distance_type=self.handles.config.search.vector_index_metric)

    async def has_vector_index(self) -> bool:
        return any(ix.columns == ["vector"] for ix in await self.handles.chunks.list_indices())

    async def rebuild_vector_index(self) -> bool:
        """Retrain the vector index from the current vectors (caller holds the writer lock)."""
        rows = await self.handles.chunks.count_rows()
        if rows < MIN_VECTOR_INDEX_ROWS:
            return False
        await self.handles.chunks.create_index("vector", config=self._vector_index_config(), replace=True)
        log.info("store.vector_index_built", database=self.handles.name, chunks=rows)
        return True

    async def create_index(self) -> bool:
        """Build (or replace) the IVF-SQ vector index; ``False`` with a warning under 256 chunks."""
        async with self.gate.writing("create-index"):
            rows = await self.handles.chunks.count_rows()
            if rows < MIN_VECTOR_INDEX_ROWS:
                # info, not warning: the caller learns it from the result and words it
                # for its user (the CLI's `Warning:` line); a warning log would say it twice.
                log.info(
                    "store.vector_index_skipped",
                    database=self.handles.name,
                    chunks=rows,
                    needed=MIN_VECTOR_INDEX_ROWS,
                )
                return False
            metric = self.handles.config.search.vector_index_metric
            await self.handles.chunks.create_index("vector", config=self._vector_index_config(), replace=True)
            self.gate.dirty = True
            log.info("store.vector_index_built", database=self.handles.name, chunks=rows, metric=metric)
            return True

    async def index_state(self) -> ChunkIndexes:
        """What ``info`` and ``doctor`` report about the chunk indexes."""
        self.handles.require_open()
        rows = await self.handles.chunks.count_rows()
        indices = {tuple(ix.columns): ix for ix in await self.handles.chunks.list_indices()}

        def describe(column: str) -> IndexState:
            index = indices.get((column,))
            if index is None:
                return {"exists": False, "indexed_rows": 0, "unindexed_rows": rows}
            indexed = index.num_indexed_rows or 0
            return {
                "exists": True,
                "type": index.index_type,
                "indexed_rows": indexed,
                "unindexed_rows": index.num_unindexed_rows or 0,
                "covers_none": rows > 0 and indexed == 0,
            }

        vector = describe("vector")
        if vector["exists"]:
            try:
                stats = await self.handles.chunks.index_stats(indices[("vector",)].name)
                vector["metric"] = stats.distance_type if stats else None
            except Exception:  # stats are informative only
                vector["metric"] = None
        return {"fts": describe("search_text"), "vector": vector}
