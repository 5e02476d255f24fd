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
- a search process's peak memory (its own process);
- 33 batches of 64 documents (512 chunks each) written one after another as
  the ingester writes them (``Store.upsert_documents``, index refresh and
  compaction included);
- vacuum after those writes, in its own process (time, peak memory) while
  another process searches throughout (answers, errors, partial documents);
  then the database goes back to its state before the writes (a tag);
- 128 such writes, then auto-maintenance while writes keep arriving:
  the longest a write waited for it (``bench/scale_maintenance.py``), and
  back to the state before the writes. ``--maintenance-only`` measures only
  this (and the vector index it needs), leaving docs/benchmarks.md alone;
  ``--texts N`` derives the chunks from N abstracts only (those already
  embedded first), so less is embedded on a slow machine (its databases are
  cached apart).

Then 25 databases of 10k chunks (``bench/scale_set.py``): the client's cold
first query over one, two and all of them, warm p50, memory. Results:
``bench/results/scale.json`` and the "## Scale" section of docs/benchmarks.md
(``--render`` rewrites it from the JSON). Takes ``/tmp/haiku_bench.lock`` while
timing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.beir import load_beir  # noqa: E402
from bench.bench_lock import alone  # noqa: E402
from bench.docs_section import write_section  # noqa: E402
from bench.embed_cache import EmbeddingCache  # noqa: E402
from bench.scale_children import child, save_queries, vacuum_with_reader  # noqa: E402
from bench.scale_config import config_for  # noqa: E402
from bench.scale_maintenance import measure_auto_maintenance, timed_writes  # noqa: E402
from bench.scale_maintenance import report_lines as maintenance_report  # noqa: E402
from bench.scale_report import report  # noqa: E402
from bench.scale_set import build_set, measure_set  # noqa: E402
from bench.search import percentile  # noqa: E402

CACHE = REPO / "bench" / ".cache"
RESULTS = REPO / "bench" / "results" / "scale.json"
DOCS = REPO / "docs" / "benchmarks.md"
CHUNKS_PER_DOCUMENT = 8
NOISE = 0.015  # per dimension: |noise| ~ 0.29 for 384 dimensions, cosine to the source ~ 0.96
SEED = 11
WRITE_BATCH = 64
WRITE_BATCHES = 33  # consecutive batches: one of them crosses the compaction after writes (every 32 fragments)
MAINTENANCE_BATCHES = 128  # writes before auto-maintenance: ~65k rows of small fragments, several steps
BEFORE_WRITES = "scale-before-writes"
SETTINGS = [(40, 50), (20, 30), (10, 10)]  # (nprobes, refine_factor); the first is the shipped default
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


_STARTED = time.monotonic()


def log(line: str) -> None:
    print(f"[{(time.monotonic() - _STARTED) / 60:5.1f} min] {line}", file=sys.stderr, flush=True)


class Corpus:
    """Real SciFact sentences and vectors, and the seeded chunks derived from them."""

    def __init__(self, texts: list[str], vectors: np.ndarray, seed: int = SEED) -> None:
        self.sentences = [_SENTENCE.split(text) for text in texts]
        self.vectors = vectors.astype(np.float32)
        self.seed = seed

    def chunk(self, index: int) -> tuple[str, np.ndarray]:
        rng = random.Random(self.seed * 1_000_003 + index)
        source = rng.randrange(len(self.sentences))
        sentences = list(self.sentences[source])
        rng.shuffle(sentences)
        other = self.sentences[rng.randrange(len(self.sentences))]
        text = " ".join([*sentences[:6], other[rng.randrange(len(other))]])
        noise = np.random.default_rng(self.seed * 7_919 + index).normal(0.0, NOISE, self.vectors.shape[1])
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


async def build(root: Path, size: int, corpus: Corpus, *, quiet: bool = False) -> float:
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
        await store.writer().documents.load_documents(
            corpus.items(0, documents), batch_size=1024,
            progress=lambda n: log(f"  {n * CHUNKS_PER_DOCUMENT:,} of {size:,} chunks written")
            if n % 8192 == 0 and not quiet else None,
        )
        await store.vacuum(retention_seconds=0)
    finally:
        await store.close()
    seconds = time.perf_counter() - started
    marker.write_text(json.dumps({"chunks": size, "build_s": round(seconds, 1)}))
    return seconds


def load_marker(root: Path) -> dict[str, Any]:
    """What the bulk load recorded (peak memory, when it was measured)."""
    marker = json.loads((root / "complete.json").read_text())
    return {"build_peak_rss_mib": marker.get("peak_rss_mib")}


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
    exact = [set(ids[i] for i in np.argpartition(-(matrix @ v), 10)[:10]) for v in vectors]
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


async def measure_writes(root: Path, corpus: Corpus, size: int) -> dict[str, Any]:
    """Batches of 64 documents written one after another, as the ingester writes them.

    ``WRITE_BATCHES`` of them, so one crosses the compaction after writes; the
    database is tagged first and restored afterwards (``restore_state``).
    """
    from haiku.core.scope import DatabaseScope
    from haiku.core.store import Store

    config = config_for(root)
    store = await Store.open(DatabaseScope.resolve(config).databases[0], config)
    try:
        if await store.tags.tag_info(BEFORE_WRITES) is None:
            await store.tags.create_tag(BEFORE_WRITES)
        first = size // CHUNKS_PER_DOCUMENT + 1_000_000  # numbers no loaded document has
        times = await timed_writes(store, corpus, first, WRITE_BATCH, WRITE_BATCHES)
        state = (await store.indexes.index_state())["fts"]
    finally:
        await store.close()
    return {"batch_documents": WRITE_BATCH, "batch_chunks": WRITE_BATCH * CHUNKS_PER_DOCUMENT,
            "batches": WRITE_BATCHES, "p50_s": round(statistics.median(times), 3),
            "max_s": round(max(times), 3), "slowest_batch": times.index(max(times)) + 1,
            "seconds": [round(t, 3) for t in times],
            "fts_unindexed_after": state["unindexed_rows"]}


async def restore_state(root: Path) -> None:
    """Back to the state before the writes (the tag), every later version removed."""
    from haiku.core.scope import DatabaseScope
    from haiku.core.store import Store

    config = config_for(root)
    store = await Store.open(DatabaseScope.resolve(config).databases[0], config)
    try:
        if await store.tags.tag_info(BEFORE_WRITES) is not None:
            safety = await store.tags.restore_tag(BEFORE_WRITES)
            await store.tags.delete_tag(safety)
            await store.tags.delete_tag(BEFORE_WRITES)
        await store.vacuum(retention_seconds=0)
    finally:
        await store.close()


async def measure_size(root: Path, size: int, corpus: Corpus, queries: list[str], vectors: np.ndarray,
                       queries_file: Path) -> dict[str, Any]:
    log(f"{size:,}: index")
    index = child("index", {"root": str(root)})
    log(f"{size:,}: search")
    search = await measure_search(root, queries, vectors)
    log(f"{size:,}: search process memory")
    search_rss = child("search_rss", {"root": str(root), "queries": str(queries_file)})
    log(f"{size:,}: writes")
    await restore_state(root)  # a run cut short may have left its writes
    write = await measure_writes(root, corpus, size)
    log(f"{size:,}: vacuum, with a reader")
    vacuum = vacuum_with_reader(root, queries_file, CHUNKS_PER_DOCUMENT)
    await restore_state(root)
    return {"index": index, "search": search, "search_rss": search_rss, "write": write, "vacuum": vacuum,
            "auto_maintenance": await measure_maintenance(root, size, corpus)}


async def measure_maintenance(root: Path, size: int, corpus: Corpus) -> dict[str, Any]:
    log(f"{size:,}: auto-maintenance, with writes")
    first = size // CHUNKS_PER_DOCUMENT + 2_000_000  # numbers neither the load nor the timed writes used
    auto = await measure_auto_maintenance(root, corpus, first, batch=WRITE_BATCH, batches=MAINTENANCE_BATCHES,
                                          during_batches=WRITE_BATCHES, tag=BEFORE_WRITES)
    await restore_state(root)
    return auto


async def run(args: argparse.Namespace) -> None:
    import logging

    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    from haiku.core.config import AppConfig
    from haiku.core.embedders import get_embedder

    started = time.perf_counter()
    dataset = load_beir(args.scifact)
    embedder = get_embedder(AppConfig())
    cache = EmbeddingCache.for_embedder(CACHE / "embeddings", embedder)
    texts = [d.full_text for d in dataset.corpus]
    if args.texts:  # the abstracts already embedded first
        texts = sorted(texts, key=lambda text: text not in cache)[: args.texts]
    queries = [] if args.maintenance_only else list(dataset.judged_queries.values())[: args.queries]
    cache.fill(texts + queries, embedder.encode, log=log)  # type: ignore[attr-defined]
    source_vectors = cache.get(texts)
    corpus = Corpus(texts, source_vectors)
    if queries:
        query_vectors = cache.get(queries).astype(np.float32)
        queries_file = save_queries(CACHE / "scale" / "queries", queries, query_vectors)
    sizes = [int(s) for s in args.sizes.split(",")]
    # A database derived from fewer abstracts is another database: never reused for a full run.
    roots = {size: CACHE / "scale" / (f"chunks-{size}" + (f"-texts{args.texts}" if args.texts else ""))
             for size in sizes}
    builds = {}
    for size in sizes:
        log(f"building {size:,} chunks")
        builds[size] = await build(roots[size], size, corpus)
    skip_set = args.no_set or args.maintenance_only
    if not skip_set:
        log("building the set of 25 databases")
        await build_set(CACHE / "scale" / "set-25", lambda k: Corpus(texts, source_vectors, seed=SEED + 1 + k),
                        build, log)
    results: dict[str, Any] = {}
    with alone(log):
        load_start = round(os.getloadavg()[0], 1)
        loads = [os.getloadavg()[0]]
        for size in sizes:
            root = roots[size]
            if args.maintenance_only:
                log(f"{size:,}: index")
                results[str(size)] = {"index": child("index", {"root": str(root)}),
                                      "auto_maintenance": await measure_maintenance(root, size, corpus)}
            else:
                results[str(size)] = {"build_s": round(builds[size], 1), **load_marker(root),
                                      **await measure_size(root, size, corpus, queries, query_vectors, queries_file)}
            loads.append(os.getloadavg()[0])
        set25 = None if skip_set else measure_set(CACHE / "scale" / "set-25", str(queries_file), log)
        load_end = round(os.getloadavg()[0], 1)
        loads.append(os.getloadavg()[0])
    meta = {"date": time.strftime("%Y-%m-%d"), "cpus": os.cpu_count(), "load_start": load_start,
            "load_end": load_end, "load_mean": round(statistics.mean(loads), 1), "queries": len(queries),
            "sizes": args.sizes, "texts": len(texts), "total_s": round(time.perf_counter() - started)}
    if args.maintenance_only and args.json == RESULTS:  # partial figures never replace the full run's
        args.json = RESULTS.with_name("scale-maintenance.json")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"meta": meta, "results": results, "set": set25}, indent=2) + "\n")
    text = "\n".join(maintenance_report(results)) if args.maintenance_only else report(results, set25, meta)
    print(text)
    if args.json == RESULTS and not args.maintenance_only:
        write_section(DOCS, text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scifact", type=Path, default=REPO.parent / "shared" / "data" / "scifact")
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--json", type=Path, default=RESULTS)
    parser.add_argument("--no-set", action="store_true", help="leave out the 25 databases")
    parser.add_argument("--texts", type=int, default=None,
                        help="derive the chunks from N SciFact abstracts only, those already embedded first")
    parser.add_argument("--maintenance-only", action="store_true",
                        help="only the auto-maintenance figures (and the vector index they need); docs left alone")
    parser.add_argument("--render", action="store_true", help="only rewrite the docs section from --json")
    args = parser.parse_args()
    if args.render:
        data = json.loads(args.json.read_text())
        write_section(DOCS, report(data["results"], data.get("set"), data["meta"]))
        return
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
