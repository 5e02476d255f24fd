"""Retrieval metrics with the standard (trec_eval / BEIR) definitions.

Pure functions over a ranked list of document ids and the judged relevance of
one query (``{doc_id: grade}``; grade ≤ 0 means not relevant):

- ``ndcg_at_k``: DCG = Σ_{i=1..k} gain(d_i) / log2(i + 1) with linear gain (the
  grade itself, as trec_eval's ``ndcg_cut``), divided by the DCG of the ideal
  ranking of the judged documents.
- ``recall_at_k``: |relevant ∩ top k| / |relevant|.

A ranked list is deduplicated before scoring (first occurrence wins), so a
document retrieved through several of its chunks counts once, at its best rank.
Queries with no relevant document are skipped by ``mean_metric``, as BEIR does.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence

Judgements = Mapping[str, int]


def dedupe(ranked: Iterable[str]) -> list[str]:
    """Ids in rank order, each kept at its first (best) position."""
    seen: set[str] = set()
    out: list[str] = []
    for doc_id in ranked:
        if doc_id not in seen:
            seen.add(doc_id)
            out.append(doc_id)
    return out


def _check_k(k: int) -> None:
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")


def dcg(gains: Sequence[float]) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


def ndcg_at_k(ranked: Sequence[str], judgements: Judgements, k: int) -> float:
    _check_k(k)
    relevant = sorted((g for g in judgements.values() if g > 0), reverse=True)
    if not relevant:
        return 0.0
    ideal = dcg(relevant[:k])
    gains = [max(judgements.get(doc_id, 0), 0) for doc_id in dedupe(ranked)[:k]]
    return dcg(gains) / ideal


def recall_at_k(ranked: Sequence[str], judgements: Judgements, k: int) -> float:
    _check_k(k)
    relevant = {doc_id for doc_id, g in judgements.items() if g > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(dedupe(ranked)[:k])) / len(relevant)


def mean_metric(
    runs: Mapping[str, Sequence[str]],
    qrels: Mapping[str, Judgements],
    metric: Callable[[Sequence[str], Judgements, int], float],
    k: int,
) -> float:
    """Mean of ``metric`` over the judged queries; a judged query with no run scores 0."""
    judged = [qid for qid, j in qrels.items() if any(g > 0 for g in j.values())]
    if not judged:
        raise ValueError("no query has a relevant document")
    return sum(metric(runs.get(qid, []), qrels[qid], k) for qid in judged) / len(judged)


def overlap_at_k(a: Sequence[str], b: Sequence[str], k: int) -> float:
    """|top-k(a) ∩ top-k(b)| / k: how much two rankings agree on their heads."""
    _check_k(k)
    return len(set(dedupe(a)[:k]).intersection(dedupe(b)[:k])) / k


STANDARD_METRICS: dict[str, tuple[Callable[[Sequence[str], Judgements, int], float], int]] = {
    "ndcg@10": (ndcg_at_k, 10),
    "recall@10": (recall_at_k, 10),
    "recall@100": (recall_at_k, 100),
}


def evaluate(runs: Mapping[str, Sequence[str]], qrels: Mapping[str, Judgements]) -> dict[str, float]:
    """nDCG@10, Recall@10 and Recall@100 averaged over the judged queries."""
    return {name: mean_metric(runs, qrels, fn, k) for name, (fn, k) in STANDARD_METRICS.items()}
