"""How candidates from several databases become one ranking (SPEC §11.6).

Plain functions over plain lists, so the rules can be read, tested and
measured on their own. Every function takes one list per database, best
first, tagged with the database's place in configured order, and returns the
fused results (copies, with ``score`` set to the fused score and the stored
vector dropped).

Tie rules everywhere: equal scores fall to the better rank within the
candidate's own database, then to configured database order. There is no
spreading across databases and no de-duplication: a strong database may fill
every slot, and two databases holding one chunk id both keep theirs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from haiku.core.models import SearchResult
from haiku.core.store.fulltext import TermStatistics, bm25_idf

# The usual reciprocal-rank-fusion constant (Cormack et al. 2009).
RRF_K = 60
# How deep each database's vector and full-text lists go for hybrid fusion,
# as a multiple of the limit. 1 keeps the per-database fetch at `limit`
# (SPEC §11.4); raising it trades latency for recall.
HYBRID_DEPTH_FACTOR = 1


def hybrid_depth(limit: int) -> int:
    """Candidates each database's two hybrid lists are asked for."""
    return max(limit, limit * HYBRID_DEPTH_FACTOR)


@dataclass(frozen=True)
class Ranked:
    """One database's candidates, best first, and its position in configured order."""

    order: int
    results: Sequence[SearchResult]


Key = tuple[int, str | None]


def key_of(order: int, result: SearchResult) -> Key:
    """Chunk ids are unique within a database only, so the database is part of the key."""
    return (order, result.chunk_id)


def _finish(result: SearchResult, score: float) -> SearchResult:
    return result.model_copy(update={"score": float(score), "vector": None})


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
    """The seeds' rule for vector and hybrid: cosine to the query vector, which the
    databases' shared embedder makes comparable where retrieval scores are not.

    ``from_distance``: the candidates are a vector search's under the cosine
    metric, so their scores give the cosine (no stored vectors needed).
    """
    items = _flatten(lists)
    scores = _vector_cosines([result for result, _, _ in items], query_vector, from_distance)
    return [_finish(result, score) for score, _, _, result in _sorted_by(items, scores)[:limit]]


def fuse_by_score(lists: Sequence[Ranked], limit: int) -> list[SearchResult]:
    """Full-text only: there is no query vector, so each database's retrieval score."""
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
) -> list[SearchResult]:
    """Hybrid across databases without losing the full-text signal.

    The vector lists merge into one global list by cosine to the query vector
    (comparable across databases), the full-text lists into one by BM25, and
    the two global lists are fused by reciprocal rank. Over one database this is
    exactly that database's own hybrid, so federation loses nothing.

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

    fused: dict[Key, float] = {}
    best_rank: dict[Key, int] = {}
    first_seen: dict[Key, SearchResult] = {}
    for ordered in (_sorted_by(vec_items, vec_scores)[:depth], _sorted_by(fts_items, fts_scores)[:depth]):
        for position, (_, rank, order, result) in enumerate(ordered, start=1):
            key = key_of(order, result)
            fused[key] = fused.get(key, 0.0) + 1.0 / (k + position)
            best_rank[key] = min(rank, best_rank.get(key, rank))
            first_seen.setdefault(key, result)
    ranking = sorted(fused, key=lambda key: (-fused[key], best_rank[key], key[0]))
    return [_finish(first_seen[key], fused[key]) for key in ranking[:limit]]


def global_idf_boosts(statistics: Sequence[TermStatistics]) -> list[dict[str, float]]:
    """Per database, the factor turning its BM25 of each query word into BM25 with the federation's IDF.

    BM25 scores a word ``idf * tf_part``; a database computes ``idf`` over its
    own chunks (N_db, df_db). Summed over the databases searched together,
    N and df give the IDF one database holding every chunk would use, so
    boosting the word by ``idf(df, N) / idf(df_db, N_db)`` makes each
    database's scores those of one database, up to each database's own
    average chunk length (docs/fusion.md). A word a database does not hold
    gets no factor there: it matches nothing in it.
    """
    total = sum(stats.chunks for stats in statistics)
    frequency: dict[str, int] = {}
    for stats in statistics:
        for word, df in stats.frequencies.items():
            frequency[word] = frequency.get(word, 0) + df
    return [
        {
            word: bm25_idf(frequency[word], total) / bm25_idf(df, stats.chunks)
            for word, df in stats.frequencies.items()
            if df > 0
        }
        for stats in statistics
    ]


def interleave(lists: Sequence[Ranked]) -> list[tuple[SearchResult, int, int]]:
    """The union of the candidates, first of each database, then second of each…

    This order is the tie order (within-database rank, then configured order).
    """
    items = _flatten(lists)
    items.sort(key=lambda item: (item[1], item[2]))
    return items


def order_by_reranker(
    candidates: Sequence[SearchResult], scored: Sequence[tuple[int, float]], limit: int
) -> list[SearchResult]:
    """Apply a reranker's ``(index, score)`` answer to the union it was given."""
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
