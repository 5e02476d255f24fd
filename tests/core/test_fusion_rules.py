"""The fusion rules as plain functions (docs/fusion.md): the ones a store's hybrid search
and the federating client share, and reciprocal rank fusion itself."""

from __future__ import annotations

import pytest

from haiku.core import fusion
from haiku.core.fusion import Ranked, reciprocal_rank_fusion
from haiku.core.models import SearchResult


def r(chunk: str, source: str, score: float = 0.0, vector=None) -> SearchResult:
    return SearchResult(content=chunk, chunk_id=chunk, source=source, score=score, vector=vector)


def test_cosine_fusion_scores_with_cosine_and_a_zero_vector_scores_zero():
    query = [1.0, 0.0]
    lists = [Ranked(0, [r("a1", "a", vector=[0.6, 0.8]), r("a2", "a", vector=[0.0, 0.0])]),
             Ranked(1, [r("b1", "b", vector=[2.0, 0.0])])]
    fused = fusion.fuse_by_cosine(lists, query, limit=3)
    assert [(x.chunk_id, x.score) for x in fused] == [("b1", 1.0), ("a1", pytest.approx(0.6)), ("a2", 0.0)]
    assert all(x.vector is None for x in fused)


def test_cosine_from_a_cosine_metric_vector_score_needs_no_stored_vector():
    # score = 1 / (1 + d) with d = 1 - cos
    lists = [Ranked(0, [r("a1", "a", score=1 / (1 + (1 - 0.8)))]), Ranked(1, [r("b1", "b", score=1 / (1 + (1 - 0.9)))])]
    fused = fusion.fuse_by_cosine(lists, [1.0, 0.0], limit=2, from_distance=True)
    assert [(x.chunk_id, x.score) for x in fused] == [("b1", pytest.approx(0.9)), ("a1", pytest.approx(0.8))]


def test_equal_cosine_falls_to_the_better_rank_within_its_own_database():
    same = [1.0, 1.0]
    lists = [Ranked(0, [r("a1", "a", vector=[1.0, 0.0]), r("a2", "a", vector=same)]),
             Ranked(1, [r("b1", "b", vector=same)])]
    fused = fusion.fuse_by_cosine(lists, [1.0, 1.0], limit=3)
    # a2 and b1 tie on cosine; b1 is first in its database, a2 second.
    assert [x.chunk_id for x in fused] == ["b1", "a2", "a1"]


def test_a_full_tie_falls_to_configured_order():
    lists = [Ranked(1, [r("x", "b", vector=[1.0, 0.0])]), Ranked(0, [r("x", "a", vector=[1.0, 0.0])])]
    assert [x.source for x in fusion.fuse_by_cosine(lists, [1.0, 0.0], limit=2)] == ["a", "b"]


def test_cosine_fusion_needs_stored_vectors():
    with pytest.raises(ValueError, match="stored vector"):
        fusion.fuse_by_cosine([Ranked(0, [r("a1", "a")])], [1.0], limit=1)


def test_score_fusion_orders_by_retrieval_score_without_spreading():
    lists = [Ranked(0, [r("a1", "a", 9.0), r("a2", "a", 8.0)]), Ranked(1, [r("b1", "b", 1.0)])]
    assert [x.chunk_id for x in fusion.fuse_by_score(lists, limit=2)] == ["a1", "a2"]


def test_rrf_fuses_global_vector_and_full_text_lists():
    vec = [Ranked(0, [r("a1", "a", vector=[1.0, 0.0]), r("a2", "a", vector=[0.0, 1.0])]),
           Ranked(1, [r("b1", "b", vector=[0.9, 0.1])])]
    fts = [Ranked(0, [r("a2", "a", 3.0)]), Ranked(1, [r("b1", "b", 5.0)])]
    fused = fusion.fuse_rrf(vec, fts, [1.0, 0.0], limit=3)
    # global vector: a1, b1, a2; global fts: b1, a2
    assert [x.chunk_id for x in fused] == ["b1", "a2", "a1"]
    assert fused[0].score == pytest.approx(1 / 62 + 1 / 61)
    assert fused[1].score == pytest.approx(1 / 63 + 1 / 62)


def test_rrf_keeps_one_chunk_id_per_database_apart():
    vec = [Ranked(0, [r("x", "a", vector=[1.0, 0.0])]), Ranked(1, [r("x", "b", vector=[1.0, 0.0])])]
    fused = fusion.fuse_rrf(vec, [Ranked(0, []), Ranked(1, [])], [1.0, 0.0], limit=5)
    assert [(x.chunk_id, x.source) for x in fused] == [("x", "a"), ("x", "b")]


def test_reranker_order_applies_its_scores_and_refuses_foreign_candidates():
    union = [r("a1", "a"), r("b1", "b"), r("a2", "a")]
    ordered = fusion.order_by_reranker(union, [(2, 0.9), (0, 0.5), (1, 0.7)], limit=2)
    assert [(x.chunk_id, x.source, x.score) for x in ordered] == [("a2", "a", 0.9), ("b1", "b", 0.7)]
    with pytest.raises(ValueError, match="not given"):
        fusion.order_by_reranker(union, [(3, 1.0)], limit=1)
    with pytest.raises(ValueError, match="not given"):
        fusion.order_by_reranker(union, [(0, 1.0), (0, 0.5)], limit=1)


def test_interleave_puts_first_of_each_database_before_second_of_any():
    lists = [Ranked(0, [r("a1", "a"), r("a2", "a")]), Ranked(1, [r("b1", "b")])]
    assert [x.chunk_id for x, _, _ in fusion.interleave(lists)] == ["a1", "b1", "a2"]


def test_interleave_follows_configured_order_whatever_order_the_lists_come_in():
    lists = [Ranked(1, [r("b1", "b"), r("b2", "b")]), Ranked(0, [r("a1", "a")])]
    assert [(x.chunk_id, rank, order) for x, rank, order in fusion.interleave(lists)] == [
        ("a1", 0, 0), ("b1", 0, 1), ("b2", 1, 1)
    ]


def test_round_robin_takes_first_of_each_group_then_second_of_each():
    assert fusion.round_robin([[1, 2, 3], [], [10], [20, 21]]) == [1, 10, 20, 2, 21, 3]
    assert fusion.round_robin([]) == []


# --- reciprocal rank fusion ------------------------------------------------------------------------


def test_rrf_scores_sum_reciprocal_ranks_with_k_60():
    fused = dict(reciprocal_rank_fusion([["a", "b"], ["b", "c"]]))
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["a"] == pytest.approx(1 / 61)
    assert fused["c"] == pytest.approx(1 / 62)


def test_rrf_orders_best_first_and_breaks_ties_by_best_rank_then_list_order():
    assert [item for item, _ in reciprocal_rank_fusion([["a", "b"], ["c", "d"]])] == ["a", "c", "b", "d"]
    assert reciprocal_rank_fusion([["x"], ["y", "x"]])[0][0] == "x"


def test_rrf_keeps_the_object_from_the_first_list_holding_it():
    first = {"id": 1, "from": "vector"}
    second = {"id": 1, "from": "fts"}
    [(kept, _)] = reciprocal_rank_fusion([[first], [second]], key=lambda d: d["id"])
    assert kept is first


def test_rrf_of_nothing_is_empty():
    assert reciprocal_rank_fusion([]) == [] and reciprocal_rank_fusion([[], []]) == []
