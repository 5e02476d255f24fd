"""Hybrid fusion over several databases ranks like one database holding everything.

Pure tests of ``haiku.core.fusion.fuse_rrf`` (no model, no database): over
N databases each asked for ``depth`` candidates, the merged global lists are cut
at ``depth``, the length one database holding everything would have returned.
Without the cut, a candidate ranked below ``depth`` globally (one database would
never have returned it) still collects reciprocal-rank credit and can displace
one that one database ranks higher.
"""

from __future__ import annotations

from haiku.core import fusion
from haiku.core.fusion import Ranked
from haiku.core.models import SearchResult


def _vec(chunk: str, source: str, cos: float) -> SearchResult:
    # The store's vector score under the cosine metric: 1 / (1 + (1 - cos)).
    return SearchResult(content=chunk, chunk_id=chunk, source=source, score=1 / (2 - cos))


def _fts(chunk: str, source: str, bm25: float) -> SearchResult:
    return SearchResult(content=chunk, chunk_id=chunk, source=source, score=bm25)


def _ids(results: list[SearchResult]) -> list[str]:
    return [r.chunk_id or "" for r in results]


def _fused(vector: dict[str, list[tuple[str, float]]], text: dict[str, list[tuple[str, float]]], limit: int):
    """fuse_rrf over databases given as {name: [(chunk, cosine)]} and {name: [(chunk, bm25)]}, in name order."""
    names = sorted(vector)
    return fusion.fuse_rrf(
        [Ranked(i, [_vec(c, n, cos) for c, cos in vector[n]]) for i, n in enumerate(names)],
        [Ranked(i, [_fts(c, n, bm25) for c, bm25 in text[n]]) for i, n in enumerate(names)],
        [1.0, 0.0],
        limit,
        from_distance=True,
    )


def test_rrf_over_two_databases_equals_rrf_over_one_holding_everything():
    # Chunk c is third by cosine and third by BM25 in the whole corpus: one database
    # asked for two candidates per list never returns it. Split off into database b,
    # it tops both of b's lists, and must still not outrank what one database ranks.
    limit = 2
    assert fusion.hybrid_depth(limit) == 2
    one = _fused(
        {"all": [("x1", 0.9), ("x2", 0.8)]},
        {"all": [("y1", 9.0), ("y2", 8.0)]},
        limit,
    )
    two = _fused(
        {"a": [("x1", 0.9), ("x2", 0.8)], "b": [("c", 0.7), ("d", 0.6)]},
        {"a": [("y1", 9.0), ("y2", 8.0)], "b": [("c", 7.0), ("d", 6.0)]},
        limit,
    )
    assert _ids(one) == ["x1", "y1"]
    assert _ids(two) == _ids(one)
