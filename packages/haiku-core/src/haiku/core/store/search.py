"""One database's search (docs/storage.md, "Search scores"; docs/fusion.md) and context expansion
(docs/client.md, "Context expansion").

Scores: vector ``1 / (1 + distance)`` (cosine distance by default), full-text
BM25, hybrid the reciprocal-rank fusion of this database's two lists: the
plan the federating client runs (``haiku.core.fusion.plan``), over this
database alone (docs/fusion.md).

A document filter is an SQL WHERE over the documents table, resolved to
document ids first and applied to chunks as a pre-filter, so ``limit`` counts
matching chunks.

Chunks that are not current (orphans: the document row is absent, or carries
another revision, see ``reads``) are never returned. Candidate lists come in
two kinds:

* checked (``enrich=True``, the default): each list's document rows are read
  with it, orphans skipped and the list re-fetched a little longer when that
  left it short, document fields filled;
* bare (``enrich=False``): the chunk query alone, no document fields, orphans
  not yet skipped. Whoever fuses bare lists enriches the survivors through
  ``enrich`` (one document-row read for all of them), which drops orphans,
  and asks for checked lists when it dropped any. Every LanceDB query costs a
  few milliseconds whatever it reads, so this saves a round trip per list:
  a hybrid search reads the document rows once, for its ``limit`` survivors,
  instead of once per list.

A hybrid search runs both of its queries against one pinned version of the
chunks table, so a document whose chunks are being replaced never contributes
chunks of two versions to one result list.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from haiku.core.fusion.plan import PLANS, Request
from haiku.core.models import DocumentItem, SearchResult, SearchType, loads_metadata
from haiku.core.sql import sql_in
from haiku.core.store._query_slots import chunk_queries
from haiku.core.store.fulltext import FTS_COLUMN, boosted_query
from haiku.core.store.fulltext_dataset import FullTextDataset
from haiku.core.store.handles import Handles
from haiku.core.store.reads import Reads, consistent_read, is_current
from haiku.core.store.schema import CHUNKS, REVISION, result_from_row
from haiku.core.store.vector_memory import VectorMemory

if TYPE_CHECKING:
    from lancedb.table import AsyncTable

_NO_MATCH = object()  # a filter that matches no document
_MAX_REFETCH = 3

# Per-word score factors for a full-text query (see haiku.core.store.fulltext), or
# an awaitable giving them that may be awaited more than once (a Task): a hybrid
# search starts its vector list while the factors are still being computed.
Boosts = Mapping[str, float] | Awaitable[Mapping[str, float]]
ItemsOf = Callable[[str], Awaitable[list[DocumentItem]]]  # a document's stored items, by its id


class Search:
    """One database's search, candidate lists, enrichment and context expansion."""

    def __init__(self, handles: Handles, reads: Reads) -> None:
        self.handles = handles
        self.reads = reads
        self.memory = VectorMemory(handles)
        self.text_dataset = FullTextDataset(handles, self.memory)

    @property
    def name(self) -> str | None:
        return self.handles.name

    # --- public ---------------------------------------------------------------------
    @consistent_read
    async def search(
        self,
        query: str,
        *,
        query_vector: Sequence[float] | None = None,
        search_type: SearchType = "hybrid",
        limit: int = 5,
        filter: str | None = None,
        with_vectors: bool = False,
        enrich: bool = True,
    ) -> list[SearchResult]:
        """This database's native search, best first.

        ``enrich=False``: bare results (see the module docstring), for a caller
        that fuses them with others and enriches the survivors itself.
        """
        self.handles.require_open()
        if limit <= 0:
            return []
        if search_type == "fts":
            return await self.fts_candidates(
                query, limit=limit, filter=filter, with_vectors=with_vectors, enrich=enrich
            )
        if query_vector is None:
            raise ValueError(f"a {search_type} search needs query_vector (the embedded query)")
        if search_type == "vector":
            return await self.vector_candidates(
                query_vector, limit=limit, filter=filter, with_vectors=with_vectors, enrich=enrich
            )
        if search_type != "hybrid":
            raise ValueError(f"search_type must be vector, fts or hybrid, got {search_type!r}")
        request = Request(
            query, query_vector, limit, filter,
            from_distance=self.handles.config.search.vector_index_metric == "cosine", keep_vectors=with_vectors,
        )  # fmt: skip
        # The plan a federated search takes over one database, orphan rule included (docs/fusion.md).
        return await PLANS[("hybrid", "own", False)].run(request, [(0, self)], enrich=enrich)

    @consistent_read
    async def vector_candidates(
        self,
        query_vector: Sequence[float],
        *,
        limit: int,
        filter: str | None = None,
        with_vectors: bool = False,
        enrich: bool = True,
    ) -> list[SearchResult]:
        """Nearest chunks by vector, scored ``1 / (1 + distance)``; checked unless ``enrich=False``."""
        self.handles.require_open()
        self._check_query_vector(query_vector)
        where = await self._prefilter(filter)
        if where is _NO_MATCH or limit <= 0:
            return []
        return await self._fetch(
            lambda n: self._vector_rows(self.handles.chunks, query_vector, n, where, with_vectors), limit, enrich
        )

    @consistent_read
    async def fts_candidates(
        self,
        query: str,
        *,
        limit: int,
        filter: str | None = None,
        with_vectors: bool = False,
        enrich: bool = True,
        boosts: Boosts | None = None,
    ) -> list[SearchResult]:
        """Full-text matches on headings and text, scored by BM25; checked unless ``enrich=False``.

        ``boosts``: run the query as a disjunction of these words, each one's
        BM25 multiplied by its factor (the federating client's global IDF);
        words not named are not searched.
        """
        self.handles.require_open()
        if not query.strip() or limit <= 0:
            return []
        where = await self._prefilter(filter)
        if where is _NO_MATCH:
            return []
        return await self._fts_list(self.handles.chunks, query, limit, where, with_vectors, enrich, boosts)

    @consistent_read
    async def hybrid_candidates(
        self,
        query: str,
        query_vector: Sequence[float],
        *,
        limit: int,
        filter: str | None = None,
        with_vectors: bool = False,
        enrich: bool = True,
        fts_boosts: Boosts | None = None,
    ) -> tuple[list[SearchResult], list[SearchResult]]:
        """The vector and full-text lists of a hybrid search, both read at one table version.

        Checked unless ``enrich=False`` (see the module docstring); ``fts_boosts``
        as ``boosts`` of ``fts_candidates``, for the full-text list.
        """
        self.handles.require_open()
        self._check_query_vector(query_vector)
        where = await self._prefilter(filter)
        if where is _NO_MATCH or limit <= 0:
            return [], []
        table, version = await self._pinned_chunks_table()
        vector_list, fts_list = await asyncio.gather(
            self._fetch(
                lambda n: self._vector_rows(table, query_vector, n, where, with_vectors, version), limit, enrich
            ),
            self._fts_list(table, query, limit, where, with_vectors, enrich, fts_boosts, version)
            if query.strip()
            else _empty(),
        )
        return vector_list, fts_list

    @consistent_read
    async def enrich(self, results: list[SearchResult]) -> list[SearchResult]:
        """Fill each result's document fields; drop results that are not current (orphans)."""
        self.handles.require_open()
        documents = await self.reads.document_rows(r.document_id for r in results if r.document_id)
        out: list[SearchResult] = []
        for result in results:
            row = documents.get(result.document_id or "")
            revision = result.stored_revision
            if row is None or (revision is not None and not is_current(revision or None, row)):
                continue
            out.append(result.model_copy(update=_document_fields(row)))
        return out

    @consistent_read
    async def expand_context(
        self, results: list[SearchResult], max_chars: int, items: ItemsOf | None = None
    ) -> list[SearchResult]:
        """Grow each result within its section, table or picture (or with neighbouring chunks of
        its document where no structure is stored), up to ``max_chars``.

        ``items`` reads a document's stored items; it is asked only for documents
        whose chunks carry item refs. Expansions that overlap within one document
        merge into one result listing every chunk id; it keeps the best member's
        score and chunk id. Output: descending score, ties in input order.
        """
        self.handles.require_open()
        from haiku.core.store.expansion import expand_results

        doc_ids = list(dict.fromkeys(r.document_id for r in results if r.document_id))
        chunk_lists = await asyncio.gather(*(self.reads.get_chunks(doc_id) for doc_id in doc_ids))
        chunks = dict(zip(doc_ids, chunk_lists, strict=True))
        laid_out = [d for d in doc_ids if items is not None and any(c.item_refs for c in chunks[d])]
        item_lists = await asyncio.gather(*(items(d) for d in laid_out)) if items is not None else []
        return expand_results(results, chunks, max_chars, dict(zip(laid_out, item_lists, strict=True)))

    # --- internals ------------------------------------------------------------------
    def _check_query_vector(self, query_vector: Sequence[float]) -> None:
        stored = self.handles.vector_dim
        if len(query_vector) != stored:
            raise ValueError(
                f"the query vector has {len(query_vector)} dimensions, but {self.handles.label} stores "
                f"{stored}-dimensional vectors"
            )

    async def _prefilter(self, filter: str | None) -> str | object | None:
        if not filter:
            return None
        ids = await self.reads.document_ids_matching(filter)
        return sql_in("document_id", ids) if ids else _NO_MATCH

    async def _pinned_chunks_table(self) -> tuple[AsyncTable, int | None]:
        """The chunks table at its current version, and that version (None: a tag's, read when needed).

        The version travels with the pinned table, so its lists need not read it again.
        """
        handles = self.handles
        if handles.tag is not None:
            return handles.chunks, None  # checked out at the tag: already one version
        version = await handles.chunks.version()
        pinned = handles.pinned_chunks
        if pinned is not None and pinned[0] == version:
            return pinned[1], version
        table = await handles.connection.open_table(CHUNKS, version=version)
        handles.pinned_chunks = (version, table)
        return table, version

    async def _vector_rows(
        self, table: AsyncTable, query_vector: Sequence[float], limit: int, where: Any, with_vectors: bool,
        version: int | None = None,
    ) -> list[tuple[dict[str, Any], float]]:  # fmt: skip
        if where is None:
            # A small database's vectors in memory: the flat scan's rows and distances, no column read.
            columns = self.handles.chunk_columns(with_vectors)
            found = await self.memory.nearest(table, query_vector, limit, columns, version=version)
            if found is not None:
                return [({**row, "_distance": d}, 1.0 / (1.0 + max(0.0, d))) for row, d in found]
        search = self.handles.config.search
        # nprobes and refine_factor steer a vector index and are ignored by the
        # flat search of a table without one (same rows, same distances), so no
        # index listing is needed: it cost a LanceDB round trip per query.
        query = (
            table.query()
            .nearest_to([float(x) for x in query_vector])
            .distance_type(search.vector_index_metric)
            .select([*self.handles.chunk_columns(with_vectors), "_distance"])
            .limit(limit)
            .nprobes(search.vector_nprobes)
            .refine_factor(search.vector_refine_factor)
        )
        if where is not None:
            query = query.where(where)
        rows = await chunk_queries.run(query.to_list)
        return [(row, 1.0 / (1.0 + max(0.0, float(row["_distance"])))) for row in rows]

    async def _fts_list(
        self,
        table: AsyncTable,
        text: str,
        limit: int,
        where: Any,
        with_vectors: bool,
        enrich: bool,
        boosts: Boosts | None,
        version: int | None = None,
    ) -> list[SearchResult]:
        factors: Mapping[str, float] | None = None
        if boosts is not None:
            factors = await boosts if inspect.isawaitable(boosts) else boosts
            if not factors:  # no word of the query is in any database searched
                return []
        return await self._fetch(
            lambda n: self._fts_rows(table, text, factors, n, where, with_vectors, version), limit, enrich
        )

    async def _fts_rows(
        self,
        table: AsyncTable,
        text: str,
        factors: Mapping[str, float] | None,
        limit: int,
        where: Any,
        with_vectors: bool,
        version: int | None = None,
    ) -> list[tuple[dict[str, Any], float]]:
        columns = self.handles.chunk_columns(with_vectors)
        if where is None:
            # The engine's cheapest path: the Lance dataset under the table (a long-lived process).
            found = await self.text_dataset.rows(table, text, factors, FTS_COLUMN, columns, limit, version=version)
            if found is not None:
                return found
        query = (
            table.query()
            .nearest_to_text(text if factors is None else boosted_query(factors), columns=[FTS_COLUMN])
            .select([*columns, "_score"])
            .limit(limit)
        )
        if where is not None:
            query = query.where(where)
        rows = await chunk_queries.run(query.to_list)
        return [(row, float(row["_score"])) for row in rows]

    async def _fetch(self, run, limit: int, checked: bool = True) -> list[SearchResult]:
        """Run a chunk query; checked: keep current rows, refetch longer if orphans made it short."""
        if not checked:
            return [result_from_row(row, score, self.name) for row, score in await run(limit)]
        want = limit
        for _ in range(_MAX_REFETCH):
            scored = await run(want)
            documents = await self.reads.document_rows(row["document_id"] for row, _ in scored)
            results = [
                result_from_row(row, score, self.name).model_copy(
                    update=_document_fields(documents[row["document_id"]])
                )
                for row, score in scored
                if is_current(row.get(REVISION), documents.get(row["document_id"]))
            ]
            short = len(scored) - len(results)
            if short == 0 or len(scored) < want or len(results) >= limit:
                return results[:limit]
            want += 2 * short
        return results[:limit]


async def _empty() -> list[SearchResult]:
    return []


def _document_fields(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "document_uri": row.get("uri"),
        "document_title": row.get("title"),
        "document_meta": loads_metadata(row.get("metadata")),
    }
