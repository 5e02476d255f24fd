"""Prototype: full-text search over several databases with global IDF (docs/fusion.md).

    python bench/fusion_global_idf.py --scifact ../shared/data/scifact [--layouts even3 even10]

Runs on the databases `bench/quality.py` built (run it first), reading their
chunk tables with LanceDB directly, because the store does not offer the two
reads this needs yet. For each query and database:

1. statistics: for each query word, how many chunks of the database match it
   (a one-word full-text query, counted), and the database's chunk count;
2. global IDF per word, ``ln(1 + (N - df + 0.5) / (df + 0.5))`` with N and df
   summed over the databases (LanceDB's own BM25 formula);
3. one full-text query per database, a disjunction of the words each boosted by
   ``idf_global / idf_local``, so the database ranks with the global IDF.

The lists merge by score as before. Reported beside the plain rule (the
database's own BM25, merged by score), with the latency of both; "df cached"
keeps each database's word counts between queries (valid while its table
version stands), the way a long-lived client would, so repeated words (of,
the, cells...) cost one count per database per run.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from bench.beir import load_beir  # noqa: E402
from bench.metrics import evaluate  # noqa: E402
from bench.quality_build import doc_id_of, layout_locations  # noqa: E402
from bench.quality_layouts import LAYOUT_LABELS, LAYOUTS  # noqa: E402

# Words as LanceDB's "simple" tokenizer splits them (the index then lower-cases and stems).
WORD = re.compile(r"\w+")
MAX_TOKEN_LENGTH = 40


def idf(df: int, n: int) -> float:
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def words_of(query: str) -> list[str]:
    return list(dict.fromkeys(w for w in WORD.findall(query.lower()) if len(w) <= MAX_TOKEN_LENGTH))


class Database:
    def __init__(self, path: Path) -> None:
        import lancedb

        db = lancedb.connect(path)
        self.chunks = db.open_table("chunks")
        self.rows = self.chunks.count_rows()
        documents = db.open_table("documents").search().select(["id", "uri"]).limit(None).to_arrow()
        self._df: dict[str, int] = {}
        self.doc_of = dict(
            zip(documents["id"].to_pylist(), (doc_id_of(u) for u in documents["uri"].to_pylist()), strict=True)
        )

    def _ranked(self, query, limit: int) -> list[tuple[float, str]]:
        table = self.chunks.search(query, query_type="fts").select(["document_id", "_score"]).limit(limit).to_arrow()
        return list(
            zip(table["_score"].to_pylist(), (self.doc_of.get(d) for d in table["document_id"].to_pylist()), strict=True)
        )

    def document_frequency(self, word: str, cached: bool = False) -> int:
        if cached:
            if word not in self._df:
                self._df[word] = self.document_frequency(word)
            return self._df[word]
        return self.chunks.search(word, query_type="fts").select(["id", "_score"]).limit(max(self.rows, 1)).to_arrow().num_rows

    def plain(self, query: str, limit: int) -> list[tuple[float, str]]:
        return self._ranked(query, limit)

    def boosted(self, boosts: dict[str, float], limit: int) -> list[tuple[float, str]]:
        from lancedb.query import BooleanQuery, MatchQuery, Occur

        clauses = [(Occur.SHOULD, MatchQuery(w, "search_text", boost=b)) for w, b in boosts.items()]
        return self._ranked(BooleanQuery(clauses), limit) if clauses else []


def merged(lists: list[list[tuple[float, str]]], depth: int) -> list[str]:
    pooled = sorted((pair for ranked in lists for pair in ranked), key=lambda p: -p[0])
    out: list[str] = []
    for _, doc in pooled:
        if doc is not None and doc not in out:
            out.append(doc)
            if len(out) == depth:
                break
    return out


def global_idf_ranking(dbs: list[Database], text: str, total: int, limit: int, cached: bool) -> list[str]:
    words = words_of(text)
    dfs = [{w: db.document_frequency(w, cached) for w in words} for db in dbs]
    global_df = {w: sum(d[w] for d in dfs) for w in words}
    lists = [
        db.boosted({w: idf(global_df[w], total) / idf(d[w], db.rows) for w in words if d[w]}, limit)
        for db, d in zip(dbs, dfs, strict=True)
    ]
    return merged(lists, limit)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scifact", "--dataset", dest="dataset", type=Path, required=True)
    parser.add_argument("--cache", type=Path, default=REPO_ROOT / "bench" / ".cache")
    parser.add_argument("--layouts", nargs="+", default=[la.name for la in LAYOUTS])
    parser.add_argument("--limit", type=int, default=100)
    args = parser.parse_args(argv)
    dataset = load_beir(args.dataset)
    roots = sorted((args.cache / "quality").glob(f"{dataset.name}-*"), key=lambda p: p.stat().st_mtime)
    if not roots:
        print("no databases built yet: run bench/quality.py first", file=sys.stderr)
        return 1
    root = roots[-1]
    print("| layout | full-text rule | nDCG@10 | Recall@10 | Recall@100 | median ms |")
    print("|---|---|---:|---:|---:|---:|")
    report = {}
    for layout in [la for la in LAYOUTS if la.name in args.layouts]:
        if not (root / layout.name / "manifest.json").exists():
            print(f"layout {layout.name} is not built under {root}", file=sys.stderr)
            return 1
        dbs = [Database(path) for path in layout_locations(layout, root).values()]
        total = sum(db.rows for db in dbs)
        runs: dict[str, dict[str, list[str]]] = {"per-database BM25": {}, "global IDF": {}, "global IDF, df cached": {}}
        times: dict[str, list[float]] = {name: [] for name in runs}
        for qid, text in dataset.judged_queries.items():
            t0 = time.perf_counter()
            runs["per-database BM25"][qid] = merged([db.plain(text, args.limit) for db in dbs], args.limit)
            times["per-database BM25"].append((time.perf_counter() - t0) * 1000)
            for name, cached in (("global IDF", False), ("global IDF, df cached", True)):
                t1 = time.perf_counter()
                runs[name][qid] = global_idf_ranking(dbs, text, total, args.limit, cached)
                times[name].append((time.perf_counter() - t1) * 1000)
        for name, run in runs.items():
            m = evaluate(run, dataset.qrels)
            median = sorted(times[name])[len(times[name]) // 2]
            report.setdefault(layout.name, {})[name] = {**{k: round(v, 4) for k, v in m.items()}, "median_ms": round(median, 1)}
            print(
                f"| {LAYOUT_LABELS[layout.name]} | {name} | {m['ndcg@10']:.4f} | {m['recall@10']:.4f} "
                f"| {m['recall@100']:.4f} | {median:.1f} |",
                flush=True,
            )
    out = REPO_ROOT / "bench" / "results" / "fusion_global_idf.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
