"""How much do per-database BM25 statistics cost a federated full-text search?

    python bench/fusion_stats.py --scifact ../shared/data/scifact

An experiment behind docs/fusion.md, independent of LanceDB: a plain BM25
(k1 = 1.2, b = 0.75, the parameters of LanceDB's full-text index; lower-cased
word tokens, no stemming) over whole documents, in the quality benchmark's
layouts. Each layout is scored twice:

- local: every database scores with its own document count, document
  frequencies and average length, and the lists merge by score (what merging
  databases' BM25 scores does);
- global-idf: document frequencies and counts summed over all databases, each
  database keeping its own average length;
- global: every statistic summed over all databases (identical to one
  database holding everything).

The gap between the two is the most that global statistics could win back.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from bench.beir import load_beir  # noqa: E402
from bench.metrics import evaluate  # noqa: E402
from bench.quality_layouts import LAYOUT_LABELS, LAYOUTS, split  # noqa: E402

K1 = 1.2
B = 0.75
_TOKEN = re.compile(r"\w+")


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


@dataclass
class Shard:
    ids: list[str]
    lengths: list[int]
    postings: dict[str, list[tuple[int, int]]]  # term -> [(doc index, tf)]

    @classmethod
    def build(cls, ids: Sequence[str], texts: Sequence[str]) -> Shard:
        postings: dict[str, list[tuple[int, int]]] = {}
        lengths = []
        for i, text in enumerate(texts):
            tokens = tokenize(text)
            lengths.append(len(tokens))
            for term, tf in Counter(tokens).items():
                postings.setdefault(term, []).append((i, tf))
        return cls(list(ids), lengths, postings)

    def df(self, term: str) -> int:
        return len(self.postings.get(term, ()))


@dataclass(frozen=True)
class Stats:
    n: int
    avgdl: float
    df: dict[str, int]

    def idf(self, term: str) -> float:
        df = self.df.get(term, 0)
        return math.log(1 + (self.n - df + 0.5) / (df + 0.5))


def stats_of(shards: Sequence[Shard], terms: set[str]) -> Stats:
    n = sum(len(s.ids) for s in shards)
    total = sum(sum(s.lengths) for s in shards)
    return Stats(n, total / n, {t: sum(s.df(t) for s in shards) for t in terms})


def score(shard: Shard, terms: set[str], stats: Stats) -> list[tuple[float, str]]:
    scores: dict[int, float] = {}
    for term in terms:
        idf = stats.idf(term)
        for doc, tf in shard.postings.get(term, ()):
            norm = tf + K1 * (1 - B + B * shard.lengths[doc] / stats.avgdl)
            scores[doc] = scores.get(doc, 0.0) + idf * tf * (K1 + 1) / norm
    return [(s, shard.ids[doc]) for doc, s in scores.items()]


MODES = ("local", "global-idf", "global")


def ranked(shards: Sequence[Shard], query: str, mode: str, depth: int = 100) -> list[str]:
    terms = set(tokenize(query))
    pooled: list[tuple[float, str]] = []
    everything = stats_of(shards, terms)
    for shard in shards:
        stats = stats_of([shard], terms)
        if mode == "global":
            stats = everything
        elif mode == "global-idf":
            stats = Stats(everything.n, stats.avgdl, everything.df)
        pooled += sorted(score(shard, terms, stats), reverse=True)[:depth]
    pooled.sort(key=lambda pair: (-pair[0], pair[1]))
    return [doc_id for _, doc_id in pooled[:depth]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scifact", "--dataset", dest="dataset", type=Path, required=True)
    args = parser.parse_args(argv)
    dataset = load_beir(args.dataset)
    queries = dataset.judged_queries
    ids = [d.id for d in dataset.corpus]
    texts = [d.full_text for d in dataset.corpus]
    print("| layout | statistics | nDCG@10 | Recall@10 | Recall@100 |")
    print("|---|---|---:|---:|---:|")
    for layout in LAYOUTS:
        parts = split(list(zip(ids, texts, strict=True)), ids, layout.weights)
        shards = [Shard.build([i for i, _ in part], [t for _, t in part]) for part in parts]
        for mode in MODES[:1] if layout.databases == 1 else MODES:
            runs = {qid: ranked(shards, text, mode) for qid, text in queries.items()}
            m = evaluate(runs, dataset.qrels)
            label = "—" if layout.databases == 1 else mode
            print(
                f"| {LAYOUT_LABELS[layout.name]} | {label} | {m['ndcg@10']:.4f} | {m['recall@10']:.4f} "
                f"| {m['recall@100']:.4f} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
