"""Retrieval quality over one database and over several (``make quality``).

    python bench/quality.py --scifact ../shared/data/scifact

Loads a BEIR-layout dataset, builds one database holding everything and the
same corpus split over 3 and 10 databases and unevenly (70/15/15), all through
the project's write path (bench/quality_build.py, bench/layout_build.py), runs every query through
``HaikuRAG.search`` for vector, full-text and hybrid search, and reports nDCG@10,
Recall@10 and Recall@100 per layout. Writes bench/results/quality.json and the
"## Quality" section of docs/benchmarks.md. Exits non-zero when the sanity
anchor or the federation tolerance is missed (``--no-fail`` to only report).

Databases, chunks and embeddings are cached under bench/.cache/quality/ and
reused by later runs; delete that directory to rebuild from scratch.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from bench.beir import load_beir  # noqa: E402
from bench.bench_lock import alone  # noqa: E402
from bench.docs_section import write_section  # noqa: E402
from bench.embed_cache import EmbeddingCache  # noqa: E402
from bench.metrics import evaluate  # noqa: E402
from bench.quality_anchor import exact_rankings  # noqa: E402
from bench.quality_build import build_layout, chunk_corpus, file_digest, fingerprint, layout_config  # noqa: E402
from bench.quality_layouts import LAYOUTS  # noqa: E402
from bench.quality_report import anchor_check, federation_checks, markdown_section  # noqa: E402
from bench.quality_run import ARMS, run_arm  # noqa: E402

DEFAULT_OUT = REPO_ROOT / "bench" / "results" / "quality.json"


def load_average() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def log(line: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {line}", file=sys.stderr, flush=True)


def quiet_logs() -> None:
    """Warnings and errors only: the store logs every document write at debug level."""
    import logging

    import structlog

    structlog.configure(
        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
    )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scifact", "--dataset", dest="dataset", type=Path, required=True,
                        help="BEIR-layout dataset directory (corpus.jsonl, queries.jsonl, qrels.tsv)")
    parser.add_argument("--cache", type=Path, default=REPO_ROOT / "bench" / ".cache",
                        help="where databases, chunks and embeddings are kept between runs")
    parser.add_argument("--out", type=Path, default=None,
                        help="JSON result (default bench/results/quality.json; a smoke run writes none unless given)")
    parser.add_argument("--docs", type=Path, default=REPO_ROOT / "docs" / "benchmarks.md",
                        help="markdown file whose '## Quality' section is rewritten")
    parser.add_argument("--limit", type=int, default=100,
                        help="chunks asked per query (Recall@100 needs at least 100)")
    parser.add_argument("--chunk-size", type=int, default=256, help="processing.chunk_size in tokens")
    parser.add_argument("--layouts", nargs="+", choices=[la.name for la in LAYOUTS],
                        default=[la.name for la in LAYOUTS])
    parser.add_argument("--arms", nargs="+", choices=[a.name for a in ARMS], default=[a.name for a in ARMS])
    parser.add_argument("--max-queries", type=int, default=None,
                        help="only the first N judged queries (a smoke run; docs are left alone)")
    parser.add_argument("--diagnose", action="store_true",
                        help="also embed whole documents (the published setting) for the anchor's diagnostics "
                             "(done anyway when their vectors are cached)")
    parser.add_argument("--no-fail", action="store_true", help="exit 0 even when a check fails")
    return parser.parse_args(argv)


def exact_diagnostics(args, dataset, docs, queries, qrels, cache, embedder) -> dict[str, dict[str, float]]:
    """Brute-force vector search over the cached vectors: no database involved (bench/quality_anchor.py)."""
    import numpy as np

    query_ids = list(queries)
    query_vectors = np.asarray(embedder.encode([queries[q] for q in query_ids]), dtype=np.float32)
    owners = [d.doc_id for d in docs for _ in d.chunks]
    chunk_vectors = cache.get([t for d in docs for t in d.embed_texts])
    out = {"exact, best chunk": evaluate(exact_rankings(query_ids, query_vectors, chunk_vectors, owners), qrels)}
    whole = [d.full_text for d in dataset.corpus]
    if args.diagnose or not cache.missing(whole):  # free once cached
        cache.fill(whole, embedder.encode, batch_size=32, log=log)
        out["exact, whole document"] = evaluate(
            exact_rankings(query_ids, query_vectors, cache.get(whole), [d.id for d in dataset.corpus]), qrels
        )
    for name, metrics in out.items():
        log(f"{name}: " + "  ".join(f"{k} {v:.4f}" for k, v in metrics.items()))
    return {name: {k: round(v, 4) for k, v in m.items()} for name, m in out.items()}


async def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    quiet_logs()
    started = time.perf_counter()
    dataset = load_beir(args.dataset)
    queries = dataset.judged_queries
    if args.max_queries is not None:
        queries = dict(list(queries.items())[: args.max_queries])
    log(f"{dataset.name}: {len(dataset.corpus)} documents, {len(queries)} judged queries")

    from haiku.core.config import AppConfig
    from haiku.core.embedders import get_embedder
    from haiku.core.store import current_schema_version

    embedder = get_embedder(AppConfig())
    identity = embedder.identity
    corpus_digest = file_digest(args.dataset / "corpus.jsonl")
    root = args.cache / "quality" / f"{dataset.name}-{fingerprint(corpus_digest, args.chunk_size, identity, current_schema_version())}"
    root.mkdir(parents=True, exist_ok=True)

    docs = chunk_corpus(dataset.corpus, root / f"chunks-{args.chunk_size}.jsonl", args.chunk_size, log)
    texts = [t for d in docs for t in d.embed_texts]
    cache = EmbeddingCache.for_embedder(args.cache / "embeddings", embedder)
    embedded = cache.fill(texts, embedder.encode, batch_size=32, log=log)  # type: ignore[attr-defined]
    log(f"{len(texts)} chunks; {embedded} embedded now, the rest cached")

    layouts = [la for la in LAYOUTS if la.name in args.layouts]
    manifests = {}
    build_started = time.perf_counter()
    for layout in layouts:
        manifests[layout.name] = await build_layout(layout, root, docs, dataset.name, cache, args.chunk_size, log)
    build_seconds = time.perf_counter() - build_started

    qrels = {qid: dataset.qrels[qid] for qid in queries}
    diagnostics = exact_diagnostics(args, dataset, docs, queries, qrels, cache, embedder)
    results: dict[str, dict[str, dict]] = {}
    # Timed alone among the benchmarks: they share one lock (docs/benchmarks.md).
    with alone():
        load_start = load_average()
        search_started = time.perf_counter()
        for arm in [a for a in ARMS if a.name in args.arms]:
            for layout in layouts:
                config = layout_config(layout, root, args.chunk_size, fusion=arm.fusion, fts_idf=arm.fts_idf)
                run = await run_arm(config, arm, queries, args.limit, log, layout.name)
                row = {name: round(value, 4) for name, value in evaluate(run.runs, qrels).items()}
                row["latency"] = run.latency_summary()
                results.setdefault(arm.name, {})[layout.name] = row
                log(f"{arm.name:14} {layout.name:8} " + "  ".join(f"{k} {v:.4f}" for k, v in row.items() if k != "latency"))
        search_seconds = time.perf_counter() - search_started
        load_end = load_average()

    report = {
        "meta": {
            "dataset": dataset.name,
            "documents": len(dataset.corpus),
            "chunks": len(texts),
            "queries": len(queries),
            "model": f"{identity.provider}/{identity.model} ({identity.vector_dim} dims)",
            "chunk_size": args.chunk_size,
            "limit": args.limit,
            "date": datetime.now(UTC).strftime("%Y-%m-%d"),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores",
            "wall_seconds": round(time.perf_counter() - started, 1),
            "build_seconds": round(build_seconds, 1),
            "search_seconds": round(search_seconds, 1),
            "load_average": {"search_start": load_start, "search_end": load_end},
            "layouts": manifests,
        },
        "results": results,
        "anchor": anchor_check(results, diagnostics),
        "federation": federation_checks(results),
    }
    smoke = args.max_queries is not None
    out = args.out or (None if smoke else DEFAULT_OUT)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2) + "\n")
    section = markdown_section(report)
    print(section)
    if not smoke:
        write_section(args.docs, section)
    failures = [c for c in report["federation"] if not c["ok"]]
    if report["anchor"] is not None and not report["anchor"]["ok"]:
        failures.append(report["anchor"])
    if failures:
        log(f"{len(failures)} check(s) failed: {failures}")
        return 0 if args.no_fail else 1
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
