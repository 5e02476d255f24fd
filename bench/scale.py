"""Scale: how search, index builds and writes grow with a database's size.

    python bench/scale.py [--sizes 10000,100000,1000000] [--json PATH] [--queries N]

For each size, one database of that many chunks (8 chunks a document) is
derived from SciFact, deterministically (seeded): every chunk takes a real
abstract's sentences in a seeded order plus one sentence of another abstract,
and that abstract's real vector (the shared embedding cache) plus small seeded
noise, renormalised (cosine to its source about 0.95), so the vectors keep a
realistic distribution and no two rows are equal. Databases are written with
the store's bulk path (``Store.load_documents``) and cached under
``bench/.cache/scale`` between runs. Then, per size:

- the vector index (``haiku-rag create-index``'s ``Store.create_index``):
  build time and peak memory, in a process of its own;
- warm search p50/p95 for vector, fts and hybrid over the judged SciFact
  queries (their real query vectors), and recall@10 of the indexed vector
  search against exact search over the same rows, at the shipped
  ``search.vector_nprobes``/``vector_refine_factor`` and two other settings;
- one batch of 64 documents (512 chunks) written as the ingester writes
  (``Store.upsert_documents``, its index refresh included), then removed.

Not measured yet (issue 11, next steps): vacuum and compaction at 1M with a
reader searching, 25 databases in one configuration, a search process's peak
memory at 1M. Results: ``bench/results/scale.json`` and the "## Scale" section
of docs/benchmarks.md. Takes ``/tmp/haiku_bench.lock`` while timing.
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.beir import load_beir  # noqa: E402
from bench.docs_section import write_section  # noqa: E402
from bench.embed_cache import EmbeddingCache  # noqa: E402
from bench.search import percentile  # noqa: E402

CACHE = REPO / "bench" / ".cache"
RESULTS = REPO / "bench" / "results" / "scale.json"
DOCS = REPO / "docs" / "benchmarks.md"
SECTION = "## Scale"
CHUNKS_PER_DOCUMENT = 8
NOISE = 0.015  # per dimension: |noise| ~ 0.29 for 384 dimensions, cosine to the source ~ 0.96
SEED = 11
WRITE_BATCH = 64
SETTINGS = [(20, 30), (10, 10), (40, 50)]  # (nprobes, refine_factor); the first is the shipped default
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class Corpus:
    """Real SciFact sentences and vectors, and the seeded chunks derived from them."""

    def __init__(self, texts: list[str], vectors: np.ndarray) -> None:
        self.sentences = [_SENTENCE.split(text) for text in texts]
        self.vectors = vectors.astype(np.float32)

    def chunk(self, index: int) -> tuple[str, np.ndarray]:
        rng = random.Random(SEED * 1_000_003 + index)
        source = rng.randrange(len(self.sentences))
        sentences = list(self.sentences[source])
        rng.shuffle(sentences)
        other = self.sentences[rng.randrange(len(self.sentences))]
        text = " ".join([*sentences[:6], other[rng.randrange(len(other))]])
        noise = np.random.default_rng(SEED * 7_919 + index).normal(0.0, NOISE, self.vectors.shape[1])
        vector = self.vectors[source] + noise.astype(np.float32)
        return text, vector / np.linalg.norm(vector)

    def items(self, start_document: int, documents: int):
        from haiku.core.models import Chunk, Document

        for number in range(start_document, start_document + documents):
            chunks, vectors = [], []
            for order in range(CHUNKS_PER_DOCUMENT):
                text, vector = self.chunk(number * CHUNKS_PER_DOCUMENT + order)
                chunks.append(Chunk(order=order, content=text))
                vectors.append(vector.tolist())
            document = Document(
                id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"scale://{number}")),
                uri=f"scale://{number}",
                title=f"derived document {number}",
                content=" ".join(c.content for c in chunks),
            )
            yield document, chunks, vectors


def config_for(root: Path):
    from haiku.core.config import config_from_dict

    return config_from_dict(
        {
            "storage": {"data_dir": str(root / "data"), "auto_vacuum": False},
            "lancedb": {"databases": {"scale": str(root / "scale.lancedb")}},
        }
    )


async def build(root: Path, size: int, corpus: Corpus) -> float:
    """The database of ``size`` chunks under ``root`` (reused when complete); seconds spent building."""
    from haiku.core.scope import DatabaseScope
    from haiku.core.store import Store

    marker = root / "complete.json"
    if marker.exists() and json.loads(marker.read_text()).get("chunks") == size:
        return float(json.loads(marker.read_text())["build_s"])
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    config = config_for(root)
    started = time.perf_counter()
    store = await Store.open(DatabaseScope.resolve(config).databases[0], config, create=True)
    try:
        documents = size // CHUNKS_PER_DOCUMENT
        await store.load_documents(
            corpus.items(0, documents), batch_size=1024,
            progress=lambda n: log(f"  {n * CHUNKS_PER_DOCUMENT:,} of {size:,} chunks written") if n % 8192 == 0 else None,
        )
        await store.vacuum(retention_seconds=0)
    finally:
        await store.close()
    seconds = time.perf_counter() - started
    marker.write_text(json.dumps({"chunks": size, "build_s": round(seconds, 1)}))
    return seconds


def index_in_child(root: Path) -> dict[str, float]:
    """Build the vector index in a process of its own, for a clean peak-memory figure."""
    code = (
        "import asyncio, json, resource, sys, time\n"
        f"sys.path.insert(0, {str(REPO)!r})\n"
        "from bench.scale import config_for\n"
        "from haiku.core.scope import DatabaseScope\n"
        "from haiku.core.store import Store\n"
        "from pathlib import Path\n"
        "async def main():\n"
        f"    config = config_for(Path({str(root)!r}))\n"
        "    store = await Store.open(DatabaseScope.resolve(config).databases[0], config)\n"
        "    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "    started = time.perf_counter()\n"
        "    await store.create_index()\n"
        "    seconds = time.perf_counter() - started\n"
        "    await store.close()\n"
        "    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "    print(json.dumps({'seconds': round(seconds, 2), 'peak_rss_mib': round(peak / 1024), "
        "'rss_before_mib': round(before / 1024)}))\n"
        "asyncio.run(main())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=7200)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-1500:])
    return json.loads(done.stdout.strip().splitlines()[-1])


async def measure_search(root: Path, queries: list[str], vectors: np.ndarray) -> dict[str, Any]:
    from haiku.core.scope import DatabaseScope
    from haiku.core.store import Store

    config = config_for(root)
    ref = DatabaseScope.resolve(config).databases[0]
    store = await Store.open(ref, config, read_only=True)
    out: dict[str, Any] = {}
    try:
        for search_type in ("vector", "fts", "hybrid"):
            await store.search(queries[0], query_vector=vectors[0].tolist(), search_type=search_type, limit=10)
            times = []
            for query, vector in zip(queries, vectors, strict=True):
                started = time.perf_counter()
                await store.search(query, query_vector=vector.tolist(), search_type=search_type, limit=10)
                times.append((time.perf_counter() - started) * 1000)
            out[search_type] = {"p50_ms": round(statistics.median(times), 2), "p95_ms": round(percentile(times, 0.95), 2)}
        out["recall"] = await _recall(store, config, vectors)
    finally:
        await store.close()
    return out


async def _recall(store, config, vectors: np.ndarray) -> list[dict[str, Any]]:
    """recall@10 of the indexed vector search against exact search over the same rows."""
    table = store.table("chunks")
    data = await table.query().select(["id", "vector"]).to_arrow()
    ids = data.column("id").to_pylist()
    # Straight from Arrow's buffer: a million rows as Python lists would take many GiB.
    vectors_column = data.column("vector").combine_chunks()
    matrix = vectors_column.values.to_numpy(zero_copy_only=False).reshape(len(ids), -1).astype(np.float32)
    exact = [set(ids[i] for i in np.argsort(-(matrix @ v))[:10]) for v in vectors]
    rows = []
    for nprobes, refine in SETTINGS:
        config.search.vector_nprobes, config.search.vector_refine_factor = nprobes, refine
        hits, times = 0, []
        for vector, truth in zip(vectors, exact, strict=True):
            started = time.perf_counter()
            found = await store.search("", query_vector=vector.tolist(), search_type="vector", limit=10, enrich=False)
            times.append((time.perf_counter() - started) * 1000)
            hits += len(truth & {r.chunk_id for r in found})
        rows.append({"nprobes": nprobes, "refine_factor": refine, "recall_at_10": round(hits / (10 * len(vectors)), 4),
                     "p50_ms": round(statistics.median(times), 2)})
    config.search.vector_nprobes, config.search.vector_refine_factor = SETTINGS[0]
    return rows


async def measure_write(root: Path, corpus: Corpus, size: int) -> dict[str, float]:
    """One batch of 64 documents as the ingester writes it, at this size; then removed again."""
    from haiku.core.scope import DatabaseScope
    from haiku.core.store import Store

    config = config_for(root)
    store = await Store.open(DatabaseScope.resolve(config).databases[0], config)
    try:
        first = size // CHUNKS_PER_DOCUMENT + 1_000_000  # numbers no loaded document has
        items = list(corpus.items(first, WRITE_BATCH))
        started = time.perf_counter()
        stored = await store.upsert_documents(items)
        seconds = time.perf_counter() - started
        for document in stored:
            await store.delete_document(document.id)
        await store.vacuum(retention_seconds=0)
    finally:
        await store.close()
    return {"batch_documents": WRITE_BATCH, "batch_chunks": WRITE_BATCH * CHUNKS_PER_DOCUMENT,
            "seconds": round(seconds, 3)}


def report(results: dict[str, Any], meta: dict[str, Any]) -> str:
    sizes = list(results)
    lines = [
        SECTION,
        "",
        f"`python bench/scale.py --sizes {','.join(sizes)}` ({meta['date']}, {meta['cpus']} cores, load "
        f"{meta['load_start']} → {meta['load_end']}; {meta['queries']} judged SciFact queries; derived chunks, "
        f"{CHUNKS_PER_DOCUMENT} a document; one database per size, IVF-PQ vector index built by `create-index`).",
        "",
        "| chunks | build (bulk load) s | index build s | index peak RSS MiB | vector p50/p95 ms | fts p50/p95 ms "
        "| hybrid p50/p95 ms | recall@10 (default) | write 64 docs s |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for size, row in results.items():
        s = row["search"]
        lines.append(
            f"| {int(size):,} | {row['build_s']:.0f} | {row['index']['seconds']:.1f} | {row['index']['peak_rss_mib']} "
            f"| {s['vector']['p50_ms']:.1f} / {s['vector']['p95_ms']:.1f} | {s['fts']['p50_ms']:.1f} / {s['fts']['p95_ms']:.1f} "
            f"| {s['hybrid']['p50_ms']:.1f} / {s['hybrid']['p95_ms']:.1f} | {s['recall'][0]['recall_at_10']:.3f} "
            f"| {row['write']['seconds']:.2f} |"
        )
    lines += ["", "Recall@10 of the indexed vector search against exact search, by setting (nprobes / refine_factor):", ""]
    lines.append("| chunks | " + " | ".join(f"{n} / {r}" for n, r in SETTINGS) + " |")
    lines.append("|---:|" + "---:|" * len(SETTINGS))
    for size, row in results.items():
        cells = [f"{r['recall_at_10']:.3f} ({r['p50_ms']:.1f} ms)" for r in row["search"]["recall"]]
        lines.append(f"| {int(size):,} | " + " | ".join(cells) + " |")
    if len(sizes) > 1:
        first, last = results[sizes[0]]["search"], results[sizes[-1]]["search"]
        growth = {t: last[t]["p50_ms"] / first[t]["p50_ms"] for t in ("vector", "fts", "hybrid")}
        write_growth = results[sizes[-1]]["write"]["seconds"] / results[sizes[0]]["write"]["seconds"]
        lines += [
            "",
            f"Growth from {int(sizes[0]):,} to {int(sizes[-1]):,} chunks: p50 vector {growth['vector']:.2f}×, "
            f"fts {growth['fts']:.2f}×, hybrid {growth['hybrid']:.2f}×; a 64-document write {write_growth:.2f}×.",
        ]
    lines += ["", "Not yet measured: vacuum at 1M with a reader searching, 25 databases in one configuration, "
              "a search process's peak memory at 1M (issue 11)."]
    return "\n".join(lines) + "\n"


async def run(args: argparse.Namespace) -> None:
    import logging

    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    from haiku.core.config import AppConfig
    from haiku.core.embedders import get_embedder

    dataset = load_beir(args.scifact)
    embedder = get_embedder(AppConfig())
    cache = EmbeddingCache.for_embedder(CACHE / "embeddings", embedder)
    texts = [d.full_text for d in dataset.corpus]
    queries = list(dataset.judged_queries.values())[: args.queries]
    cache.fill(texts + queries, embedder.encode, log=log)  # type: ignore[attr-defined]
    corpus = Corpus(texts, cache.get(texts))
    query_vectors = cache.get(queries).astype(np.float32)
    sizes = [int(s) for s in args.sizes.split(",")]
    results: dict[str, Any] = {}
    builds = {}
    for size in sizes:
        log(f"building {size:,} chunks")
        builds[size] = await build(CACHE / "scale" / f"chunks-{size}", size, corpus)
    with open("/tmp/haiku_bench.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        load_start = round(os.getloadavg()[0], 1)
        for size in sizes:
            root = CACHE / "scale" / f"chunks-{size}"
            log(f"{size:,}: index")
            index = index_in_child(root)
            log(f"{size:,}: search")
            search = await measure_search(root, queries, query_vectors)
            log(f"{size:,}: write")
            write = await measure_write(root, corpus, size)
            results[str(size)] = {"build_s": round(builds[size], 1), "index": index, "search": search, "write": write}
        load_end = round(os.getloadavg()[0], 1)
    meta = {"date": time.strftime("%Y-%m-%d"), "cpus": os.cpu_count(), "load_start": load_start,
            "load_end": load_end, "queries": len(queries)}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"meta": meta, "results": results}, indent=2) + "\n")
    text = report(results, meta)
    print(text)
    if args.json == RESULTS:
        write_section(DOCS, text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scifact", type=Path, default=REPO.parent / "shared" / "data" / "scifact")
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--json", type=Path, default=RESULTS)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
