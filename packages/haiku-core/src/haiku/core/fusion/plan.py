"""A search as a plan: what each database answers, and how the answers become one ranking (docs/fusion.md#the-rules).

A plan is chosen once, from ``PLANS``, by the search type, the fusion rule
and whether a reranker orders the results, and runs the same way over one
database and over a set (``run``): every database takes the plan's **step**
(its bare candidates) at once, the plan's **fusion** turns them into
survivors, and only the survivors are enriched through the database each
came from, orphans dropped (``survivors.fuse_and_enrich``).

The fusion rule of a single database is ``own``: it keeps its own scores
(vector ``1 / (1 + distance)``, BM25) and, for hybrid, fuses its own two
lists by reciprocal rank, which is also the hybrid every database of a set
answers under the ``cosine`` rule or a reranker (``own_hybrid``: the one
place a database's hybrid is built, for a store searched alone too).

The databases are anything with the candidate methods ``CandidateDatabase``
names; nothing here imports the store.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, Protocol

from haiku.core.fusion.rules import (
    Ranked,
    fuse_by_cosine,
    fuse_by_score,
    fuse_rrf,
    hybrid_depth,
    interleave,
    order_by_reranker,
)
from haiku.core.fusion.survivors import fuse_and_enrich
from haiku.core.models import SearchResult

Rule = Literal["own", "rrf", "cosine"]  # "own": one database's own scores
Boosts = Mapping[str, float] | Awaitable[Mapping[str, float]]
Pair = tuple[list[SearchResult], list[SearchResult]]  # a hybrid search's vector and full-text lists


class CandidateDatabase(Protocol):
    """A database answering with candidate lists (``Store``'s search part)."""

    @property
    def name(self) -> str | None: ...

    async def vector_candidates(
        self, query_vector: Sequence[float], *, limit: int, filter: str | None = ..., with_vectors: bool = ...,
        enrich: bool = ...,
    ) -> list[SearchResult]: ...  # fmt: skip

    async def fts_candidates(
        self, query: str, *, limit: int, filter: str | None = ..., with_vectors: bool = ..., enrich: bool = ...,
        boosts: Any = ...,
    ) -> list[SearchResult]: ...  # fmt: skip

    async def hybrid_candidates(
        self, query: str, query_vector: Sequence[float], *, limit: int, filter: str | None = ...,
        with_vectors: bool = ..., enrich: bool = ..., fts_boosts: Any = ...,
    ) -> Pair: ...  # fmt: skip

    async def enrich(self, results: list[SearchResult]) -> list[SearchResult]: ...


class Reranker(Protocol):
    async def rerank(self, query: str, documents: list[str], top_n: int) -> list[tuple[int, float]]: ...


def _no_boosts(_database: object) -> Boosts | None:
    return None


@dataclass(frozen=True)
class Request:
    """One search's arguments, as every plan reads them.

    ``from_distance``: vector scores give the cosine (the cosine metric), so
    stored vectors are read back only otherwise. ``boosts``: each database's
    full-text word factors (the federation's IDF), or None for its own.
    ``keep_vectors``: the results keep their stored vectors; ``read_vectors``
    (set by the plan): the vector lists read them, for the plan's fusion.
    """

    text: str
    vector: Sequence[float] | None
    limit: int
    filter: str | None = None
    from_distance: bool = True
    keep_vectors: bool = False
    boosts: Callable[[Any], Boosts | None] = _no_boosts
    reranker: Reranker | None = None
    pool: int = 0  # candidates each database gives a reranker
    read_vectors: bool = False

    @property
    def query_vector(self) -> Sequence[float]:
        if self.vector is None:
            raise ValueError("this search needs query_vector (the embedded query)")
        return self.vector


Step = Callable[[Request, Any, bool], Awaitable[Any]]  # (request, database, checked) -> its candidates
Fusion = Callable[[Request, list[Ranked] | list[tuple[Ranked, Ranked]]], Awaitable[list[SearchResult]]]


# --- what each database answers --------------------------------------------------------------
async def vector_list(request: Request, database: CandidateDatabase, checked: bool) -> list[SearchResult]:
    return await database.vector_candidates(
        request.query_vector, limit=request.limit, filter=request.filter,
        with_vectors=request.read_vectors, enrich=checked,
    )  # fmt: skip


async def fts_list(request: Request, database: CandidateDatabase, checked: bool) -> list[SearchResult]:
    boosts = request.boosts(database)
    return await database.fts_candidates(
        request.text, limit=request.limit, filter=request.filter, with_vectors=request.keep_vectors,
        enrich=checked, **({} if boosts is None else {"boosts": boosts}),
    )  # fmt: skip


async def hybrid_pair(request: Request, database: CandidateDatabase, checked: bool) -> Pair:
    # Both lists at one table version: a document being replaced never contributes chunks of two versions.
    # Reciprocal rank fusion orders the vector list by cosine: the stored vectors give it under l2.
    return await database.hybrid_candidates(
        request.text, request.query_vector, limit=hybrid_depth(request.limit), filter=request.filter,
        with_vectors=request.keep_vectors or not request.from_distance, enrich=checked,
        fts_boosts=request.boosts(database),
    )  # fmt: skip


async def own_hybrid(request: Request, database: CandidateDatabase, checked: bool) -> list[SearchResult]:
    """One database's hybrid ranking: its two lists fused by reciprocal rank (``fuse_rrf`` over one pair)."""
    pair = await hybrid_pair(request, database, checked)
    return await _rrf(request, [(Ranked(0, pair[0]), Ranked(0, pair[1]))])


async def _own_hybrid_with_vectors(request: Request, database: CandidateDatabase, checked: bool) -> list[SearchResult]:
    return await own_hybrid(replace(request, keep_vectors=True), database, checked)


def _pooled(step: Step) -> Step:
    """A step at the reranker's pool size, without stored vectors (the reranker reads text)."""

    async def pooled(request: Request, database: CandidateDatabase, checked: bool) -> Any:
        wider = Request(request.text, request.vector, request.pool, request.filter, request.from_distance)
        return await step(wider, database, checked)

    return pooled


# --- how the answers become one ranking ------------------------------------------------------
async def _own(request: Request, lists: list[Ranked]) -> list[SearchResult]:
    """One database's list as it ranked it."""
    return list(lists[0].results)


async def _by_cosine(request: Request, lists: list[Ranked]) -> list[SearchResult]:
    return fuse_by_cosine(lists, request.query_vector, request.limit, from_distance=request.from_distance)


async def _hybrid_by_cosine(request: Request, lists: list[Ranked]) -> list[SearchResult]:
    # Each database's own hybrid list carries its stored vectors: fused scores are not distances.
    return fuse_by_cosine(lists, request.query_vector, request.limit)


async def _by_score(request: Request, lists: list[Ranked]) -> list[SearchResult]:
    return fuse_by_score(lists, request.limit)


async def _rrf(request: Request, pairs: list[tuple[Ranked, Ranked]]) -> list[SearchResult]:
    return fuse_rrf(
        [vectors for vectors, _ in pairs], [texts for _, texts in pairs], request.query_vector, request.limit,
        from_distance=request.from_distance, keep_vectors=request.keep_vectors,
    )  # fmt: skip


async def _reranked(request: Request, lists: list[Ranked]) -> list[SearchResult]:
    assert request.reranker is not None
    union = [result for result, _, _ in interleave(lists)]
    scored = await request.reranker.rerank(request.text, [result.content for result in union], request.limit)
    return order_by_reranker(union, scored, request.limit)


@dataclass(frozen=True)
class Plan:
    """What each database answers (``step``) and how the answers are fused (``fusion``).

    ``merges_bm25``: the fusion compares full-text scores of several databases,
    which then want the federation's IDF (docs/fusion.md#why-full-text-search-needs-global-statistics).
    ``cosines``: the fusion takes each vector candidate's cosine, which under
    the l2 metric needs its stored vector. ``pairs``: the step answers a hybrid pair.
    """

    step: Step
    fusion: Fusion
    merges_bm25: bool = False
    cosines: bool = False
    pairs: bool = False

    async def run(
        self, request: Request, databases: Sequence[tuple[int, Any]], *, enrich: bool = True
    ) -> list[SearchResult]:
        """Every database's step at once, fused; the survivors enriched unless ``enrich=False``."""
        reads = request.keep_vectors or (self.cosines and not request.from_distance)
        request = replace(request, read_vectors=reads)

        async def fetch(database: Any, checked: bool) -> Any:
            return await self.step(request, database, checked)

        async def fuse(candidates: dict[int, Any]) -> list[SearchResult]:
            orders = sorted(candidates)  # configured order: it breaks ties
            if self.pairs:
                found = [(Ranked(o, candidates[o][0]), Ranked(o, candidates[o][1])) for o in orders]
                return await self.fusion(request, found)
            return await self.fusion(request, [Ranked(o, candidates[o]) for o in orders])

        if not enrich:
            answers = await asyncio.gather(*(fetch(database, False) for _, database in databases))
            return await fuse({order: found for (order, _), found in zip(databases, answers, strict=True)})
        return await fuse_and_enrich(databases, fetch, fuse)


# Vector candidates fused by cosine to the query vector: a vector search over a set, and an image query.
VECTOR_BY_COSINE = Plan(vector_list, _by_cosine, cosines=True)


def _table() -> dict[tuple[str, Rule, bool], Plan]:
    rules: tuple[Rule, ...] = ("own", "rrf", "cosine")
    plans: dict[tuple[str, Rule, bool], Plan] = {
        ("vector", "own", False): Plan(vector_list, _own),
        ("vector", "rrf", False): VECTOR_BY_COSINE,
        ("vector", "cosine", False): VECTOR_BY_COSINE,
        ("fts", "own", False): Plan(fts_list, _own),
        ("fts", "rrf", False): Plan(fts_list, _by_score, merges_bm25=True),
        ("fts", "cosine", False): Plan(fts_list, _by_score, merges_bm25=True),
        # The same fusion over one database and a set: a database searched alone ranks as it would in a set.
        ("hybrid", "own", False): Plan(hybrid_pair, _rrf, pairs=True),
        ("hybrid", "rrf", False): Plan(hybrid_pair, _rrf, merges_bm25=True, pairs=True),
        ("hybrid", "cosine", False): Plan(_own_hybrid_with_vectors, _hybrid_by_cosine),
    }
    steps = {"vector": vector_list, "fts": fts_list, "hybrid": own_hybrid}
    for search_type, step in steps.items():
        for rule in rules:
            plans[(search_type, rule, True)] = Plan(_pooled(step), _reranked)
    return plans


# Keyed by (search type, fusion rule, reranked); docs/fusion.md#the-rules.
PLANS: dict[tuple[str, Rule, bool], Plan] = _table()


def choose(search_type: str, fusion: str, *, databases: int, reranked: bool) -> Plan:
    """The plan of a search over ``databases`` databases: one database keeps its own scores (rule ``own``)."""
    rule = "own" if databases == 1 else fusion
    try:
        return PLANS[(search_type, rule, reranked)]  # type: ignore[index]
    except KeyError:
        raise ValueError(f"no search plan for search type {search_type!r} under fusion {fusion!r}") from None
