"""The benchmark's metrics follow the standard (trec_eval / BEIR) definitions.

Expected values are computed by hand from the definitions: DCG = Σ gain_i / log2(i + 1)
over ranks i = 1..k, linear gain, normalised by the ideal ordering of the judged documents.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from bench.beir import load_beir
from bench.metrics import dedupe, evaluate, mean_metric, ndcg_at_k, overlap_at_k, recall_at_k

LOG2_3 = math.log2(3)


def test_ndcg_of_the_ideal_ranking_is_one():
    assert ndcg_at_k(["a", "b", "x"], {"a": 1, "b": 1}, 10) == pytest.approx(1.0)


def test_ndcg_discounts_a_relevant_document_by_log2_of_rank_plus_one():
    # DCG = 1/log2(2) + 0 + 1/log2(4) = 1.5; ideal = 1 + 1/log2(3).
    assert ndcg_at_k(["a", "x", "b"], {"a": 1, "b": 1}, 10) == pytest.approx(1.5 / (1 + 1 / LOG2_3))


def test_ndcg_uses_the_grade_as_a_linear_gain():
    # Ranked b (grade 1) then a (grade 2): DCG = 1 + 2/log2(3); ideal = 2 + 1/log2(3).
    assert ndcg_at_k(["b", "a"], {"a": 2, "b": 1}, 10) == pytest.approx((1 + 2 / LOG2_3) / (2 + 1 / LOG2_3))


def test_ndcg_ignores_documents_ranked_below_k():
    ranked = [f"x{i}" for i in range(10)] + ["a"]
    assert ndcg_at_k(ranked, {"a": 1}, 10) == 0.0


def test_ndcg_ideal_is_cut_at_k_when_more_documents_are_relevant():
    judgements = {f"r{i}": 1 for i in range(12)}
    assert ndcg_at_k([f"r{i}" for i in range(10)], judgements, 10) == pytest.approx(1.0)


def test_ndcg_treats_non_positive_grades_as_not_relevant():
    assert ndcg_at_k(["n", "a"], {"a": 1, "n": 0}, 10) == pytest.approx(1 / LOG2_3)


def test_a_document_retrieved_through_several_chunks_counts_once_at_its_best_rank():
    assert ndcg_at_k(["a", "a", "a", "b"], {"a": 1, "b": 1}, 2) == pytest.approx(1.0)
    assert recall_at_k(["a", "a", "b"], {"a": 1, "b": 1}, 2) == 1.0


def test_dedupe_keeps_first_occurrence_order():
    assert dedupe(["b", "a", "b", "c", "a"]) == ["b", "a", "c"]


def test_recall_counts_relevant_documents_found_in_the_top_k():
    assert recall_at_k(["a", "x", "y", "b"], {"a": 1, "b": 1}, 3) == 0.5
    assert recall_at_k(["a", "x", "y", "b"], {"a": 1, "b": 1}, 4) == 1.0


def test_metrics_reject_a_non_positive_cutoff():
    with pytest.raises(ValueError, match="k must be positive"):
        ndcg_at_k(["a"], {"a": 1}, 0)


def test_mean_metric_skips_unjudged_queries_and_scores_a_missing_run_as_zero():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 0}}
    runs = {"q1": ["a"], "q3": ["c"]}
    assert mean_metric(runs, qrels, recall_at_k, 10) == pytest.approx(0.5)


def test_evaluate_reports_ndcg10_recall10_recall100():
    qrels = {"q": {"a": 1, "b": 1}}
    ranked = ["a"] + [f"x{i}" for i in range(20)] + ["b"]
    assert evaluate({"q": ranked}, qrels) == pytest.approx(
        {"ndcg@10": 1 / (1 + 1 / LOG2_3), "recall@10": 0.5, "recall@100": 1.0}
    )


def test_overlap_at_k_is_the_shared_fraction_of_two_heads():
    assert overlap_at_k(["a", "b", "c"], ["c", "d", "a"], 3) == pytest.approx(2 / 3)


def test_load_beir_reads_corpus_queries_and_qrels(tmp_path: Path):
    (tmp_path / "corpus.jsonl").write_text(
        '{"_id": "d1", "title": "Title", "text": "Body."}\n{"_id": "d2", "title": "", "text": "Only body."}\n'
    )
    (tmp_path / "queries.jsonl").write_text('{"_id": "q1", "text": "what?", "metadata": {}}\n')
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td2\t1\n")
    ds = load_beir(tmp_path)
    assert [(d.id, d.full_text) for d in ds.corpus] == [("d1", "Title Body."), ("d2", "Only body.")]
    assert ds.queries == {"q1": "what?"}
    assert ds.qrels == {"q1": {"d2": 1}}


def test_load_beir_names_the_missing_file(tmp_path: Path):
    with pytest.raises(FileNotFoundError, match=r"corpus\.jsonl"):
        load_beir(tmp_path)
