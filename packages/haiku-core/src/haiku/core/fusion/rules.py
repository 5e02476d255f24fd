"""How ranked candidate lists become one ranking (docs/fusion.md#the-rules).

Plain functions over plain lists, so the rules can be read, tested and measured
on their own. A store's hybrid search and the federating client's search both
call them: a database's hybrid search is ``fuse_rrf`` over its one pair of
lists, the federation's is ``fuse_rrf`` over one pair per database, at the same
depth (``hybrid_depth``), so one database ranks alike whether asked alone,
through ``Store.search`` or through ``HaikuRAG.search``.

The multi-list functions take one ``Ranked`` list per database, best first,
tagged with the database's place in configured order, and return the fused
results (copies, with ``score`` set to the fused score and the stored vector
dropped unless asked to keep it).

Tie rules everywhere: equal scores fall to the better rank within the
candidate's own database, then to configured database order. There is no
spreading across databases and no de-duplication: a strong database may fill
every slot, and two databases holding one chunk id both keep theirs.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from haiku.core.models import SearchResult

T = TypeVar("T")

# The usual reciprocal-rank-fusion constant (Cormack et al. 2009).
RRF_K = 60
# How deep the vector and full-text lists of a hybrid search go, as a multiple
# of the limit, in one database and in each database of a federation alike.
# 1 keeps each list at `limit`; raising it trades latency for recall.
HYBRID_DEPTH_FACTOR = 1


def hybrid_depth(limit: int) -> int:
    """Candidates each of a database's two hybrid lists is asked for."""
    return max(limit, limit * HYBRID_DEPTH_FACTOR)


def reciprocal_rank_fusion(
    lists: Sequence[Sequence[T]],
    *,
    k: int = RRF_K,
    key: Callable[[T], Hashable] | None = None,
    tie: Callable[[T, int], tuple[Any, ...]] | None = None,
) -> list[tuple[T, float]]:
    """Fuse ranked lists: each item scores ``sum(1 / (k + rank))`` over the lists holding it.

    ``rank`` starts at 1. Items are identified by ``key(item)`` (the item itself
    by default); the object kept is the one from the earliest list that holds
    it. Best first; equal scores keep the better single rank, then the earlier
    list, then the earlier position, so the order is deterministic. ``tie(item,
    rank)`` replaces "the better single rank" by another key, taken at its
    lowest over the item's appearances.
    """
    if k < 0:
        raise ValueError("k must be >= 0")
    identify = key or (lambda item: item)
    rank_key = tie or (lambda _item, rank: (rank,))
    scores: dict[Hashable, float] = {}
    kept: dict[Hashable, T] = {}
    best: dict[Hashable, tuple[Any, ...]] = {}
    for list_index, ranked in enumerate(lists):
        seen_here: set[Hashable] = set()
        for position, item in enumerate(ranked):
            ident = identify(item)
            if ident in seen_here:
                continue  # a list counts an item once, at its best rank
            seen_here.add(ident)
            rank = position + 1
            scores[ident] = scores.get(ident, 0.0) + 1.0 / (k + rank)
            if ident not in kept:
                kept[ident] = item
            candidate = (*rank_key(item, rank), list_index, position)
            if ident not in best or candidate < best[ident]:
                best[ident] = candidate
    order = sorted(scores, key=lambda ident: (-scores[ident], best[ident]))
    return [(kept[ident], scores[ident]) for ident in order]


@dataclass(frozen=True)
class Ranked:
    """One database's candidates, best first, and its position in configured order."""

    order: int
    results: Sequence[SearchResult]


Key = tuple[int, str | None]


def key_of(order: int, result: SearchResult) -> Key:
    """Chunk ids are unique within a database only, so the database is part of the key."""
    return (order, result.chunk_id)


def _finish(result: SearchResult, score: float, keep_vector: bool = False) -> SearchResult:
    update: dict[str, Any] = {"score": float(score)}
    if not keep_vector:
        update["vector"] = None
    return result.model_copy(update=update)


def cosine_scores(query_vector: Sequence[float], vectors: Sequence[Sequence[float] | None]) -> list[float]:
    """Cosine similarity of each vector to the query; a zero-norm vector scores 0."""
    if not vectors:
        return []
    if any(v is None for v in vectors):
        raise ValueError("cosine fusion needs each candidate's stored vector (search with with_vectors=True)")
    query = np.asarray(query_vector, dtype=np.float64)
    matrix = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1) * np.linalg.norm(query)
    dots = matrix @ query
    with np.errstate(divide="ignore", invalid="ignore"):
        sims = np.where(norms > 0, dots / np.where(norms > 0, norms, 1.0), 0.0)
    return [float(s) for s in sims]


def cosine_from_vector_score(score: float) -> float:
    """A store's vector score is ``1 / (1 + d)``; with the cosine metric ``d = 1 - cos``.

    So the cosine comes back without reading the stored vector. Exact whenever the
    distance is (a flat search, or an index with a refine step, as the store runs it).
    """
    return 2.0 - 1.0 / score if score > 0 else 0.0


def _vector_cosines(
    results: Sequence[SearchResult], query_vector: Sequence[float], from_distance: bool
) -> list[float]:
    if from_distance:
        return [cosine_from_vector_score(result.score) for result in results]
    return cosine_scores(query_vector, [result.vector for result in results])


def _flatten(lists: Iterable[Ranked]) -> list[tuple[SearchResult, int, int]]:
    """(result, rank within its database, database order) for every candidate."""
    return [(result, rank, ranked.order) for ranked in lists for rank, result in enumerate(ranked.results)]


def _sorted_by(items: list[tuple[SearchResult, int, int]], scores: Sequence[float]):
    triples = [(score, rank, order, result) for (result, rank, order), score in zip(items, scores, strict=True)]
    triples.sort(key=lambda t: (-t[0], t[1], t[2]))
    return triples


def fuse_by_cosine(
    lists: Sequence[Ranked], query_vector: Sequence[float], limit: int, *, from_distance: bool = False
) -> list[SearchResult]:
    """Vector search, and hybrid under ``search.fusion: cosine``: cosine to the query
    vector, which the databases' shared embedder makes comparable where retrieval
    scores are not (docs/fusion.md#why-these-rules).

    ``from_distance``: the candidates are a vector search's under the cosine
    metric, so their scores give the cosine (no stored vectors needed).
    """
    items = _flatten(lists)
    scores = _vector_cosines([result for result, _, _ in items], query_vector, from_distance)
    return [_finish(result, score) for score, _, _, result in _sorted_by(items, scores)[:limit]]


def fuse_by_score(lists: Sequence[Ranked], limit: int) -> list[SearchResult]:
    """Full-text only: there is no query vector, so each database's retrieval score
    (BM25, made comparable by the federation's IDF: ``global_idf``)."""
    items = _flatten(lists)
    scores = [result.score for result, _, _ in items]
    return [_finish(result, score) for score, _, _, result in _sorted_by(items, scores)[:limit]]


def fuse_rrf(
    vector_lists: Sequence[Ranked],
    fts_lists: Sequence[Ranked],
    query_vector: Sequence[float],
    limit: int,
    k: int = RRF_K,
    *,
    from_distance: bool = False,
    keep_vectors: bool = False,
) -> list[SearchResult]:
    """Hybrid search: the vector and full-text lists fused by reciprocal rank.

    The vector lists merge into one global list by cosine to the query vector
    (comparable across databases), the full-text lists into one by BM25, and
    the two global lists are fused by reciprocal rank. Over one database the
    global lists are that database's own, in its own order.

    Each global list is cut at ``hybrid_depth(limit)``, the depth every database
    was asked for: one database holding everything would have returned exactly
    that many, so a candidate ranked below it globally (which only a split
    corpus brings in) earns no reciprocal-rank credit. Without the cut it could
    outrank what one database ranks higher (docs/fusion.md).
    """
    depth = hybrid_depth(limit)
    vec_items = _flatten(vector_lists)
    vec_scores = _vector_cosines([result for result, _, _ in vec_items], query_vector, from_distance)
    fts_items = _flatten(fts_lists)
    fts_scores = [result.score for result, _, _ in fts_items]
    global_lists = [
        [(result, rank, order) for _, rank, order, result in _sorted_by(items, scores)[:depth]]
        for items, scores in ((vec_items, vec_scores), (fts_items, fts_scores))
    ]
    fused = reciprocal_rank_fusion(
        global_lists,
        k=k,
        key=lambda item: key_of(item[2], item[0]),
        tie=lambda item, _position: (item[1], item[2]),
    )
    return [_finish(result, score, keep_vectors) for (result, _, _), score in fused[:limit]]


def round_robin(groups: Sequence[Sequence[T]]) -> list[T]:
    """First of each group, then second of each…, in the order the groups come.

    How the documents of several databases are listed (docs/client.md#listing-and-lookups).
    """
    merged: list[T] = []
    longest = max((len(group) for group in groups), default=0)
    for position in range(longest):
        merged.extend(group[position] for group in groups if position < len(group))
    return merged


def interleave(lists: Sequence[Ranked]) -> list[tuple[SearchResult, int, int]]:
    """The union of the candidates, first of each database, then second of each…

    This order is the tie order (within-database rank, then configured order):
    what a reranker is given (docs/client.md#how-results-from-several-databases-are-ranked).
    """
    in_order = sorted(lists, key=lambda ranked: ranked.order)
    return round_robin(
        [[(result, rank, ranked.order) for rank, result in enumerate(ranked.results)] for ranked in in_order]
    )


def order_by_reranker(
    candidates: Sequence[SearchResult], scored: Sequence[tuple[int, float]], limit: int
) -> list[SearchResult]:
    """Apply a reranker's ``(index, score)`` answer to the union it was given (docs/client.md#rerankers)."""
    seen: set[int] = set()
    pairs: list[tuple[float, int]] = []
    for index, score in scored:
        if not 0 <= index < len(candidates) or index in seen:
            raise ValueError(
                f"the reranker returned candidate {index}, which it was not given "
                f"(it was given {len(candidates)} candidates, each once)"
            )
        seen.add(index)
        pairs.append((float(score), index))
    pairs.sort(key=lambda pair: (-pair[0], pair[1]))
    return [_finish(candidates[index], score) for score, index in pairs[:limit]]
