"""Search latency: SciFact in one database versus split over 3, 10 and 25.

    python bench/search.py [--scifact PATH] [--limit N] [--queries Q] [--repeats R] [--json OUT]

Run with another checkout's packages first on ``PYTHONPATH`` to time that code
on the same databases (the before of a before/after).

Each document is stored as one chunk holding ``title + " " + text``, embedded
once and cached under ``bench/.cache/embeddings`` (shared with the quality
benchmark); the four layouts are built once per corpus size under
``bench/.cache/search`` by the benchmarks' one builder (bench/layout_build.py:
``Store.load_documents``, then vacuum). Then, in one process and one run, so
the ratios compare like with like:

- warm latency: p50/p95 of ``client.search`` for vector, fts and hybrid over
  every layout, after a warm-up, with the query vectors embedded beforehand
  (the embedder costs the same however many databases there are, so leaving
  it out shows what federation itself costs), and also end to end for hybrid;
- cold first query: a new client over the layout entered and its first hybrid
  search done (so every layout pays for opening its databases: one database
  opens on enter, a set's open concurrently on the first search); the median
  of ``--repeats`` fresh clients;
- the ratios federated/single for each (p50, and p95 for full-text and hybrid);
- per layout and search type, the CPU milliseconds per search (every thread of
  the process: load inflates it far less than wall time) and the LanceDB
  queries per search.

Word counts that earlier runs of the federated full-text search saved under
each layout's data directory are removed first, so every run meets its queries
as new ones (the word statistics the databases keep are theirs, and stay).

Results go to stdout (a markdown table) and ``bench/results/search.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench import layout_build  # noqa: E402
from bench.beir import BeirDoc, load_beir  # noqa: E402
from bench.embed_cache import EmbeddingCache  # noqa: E402
from bench.layout_build import databases_config  # noqa: E402

if TYPE_CHECKING:
    from haiku.core.store.writes import DocumentWrite

CACHE = REPO / "bench" / ".cache"
RESULTS = REPO / "bench" / "results" / "search.json"
LAYOUTS = {"single": 1, "split3": 3, "split10": 10, "split25": 25}
SEARCH_TYPES = ("vector", "fts", "hybrid")
LIMIT = 10


def log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def layout_config(root: Path, parts: int):
    return databases_config({f"part{i:02d}": root / f"part{i:02d}.lancedb" for i in range(parts)}, root / "data")


def _writes(docs: list[BeirDoc], cache: EmbeddingCache) -> Iterator[DocumentWrite]:
    from haiku.core.models import Chunk, Document

    vectors = cache.get([d.full_text for d in docs]).tolist()
    for doc, vector in zip(docs, vectors, strict=True):
        document = Document(uri=f"scifact://{doc.id}", title=doc.title, content=doc.full_text, metadata={"beir_id": doc.id})
        yield document, [Chunk(order=0, content=doc.full_text)], [vector]


async def build_layout(root: Path, parts: int, docs: list[BeirDoc], cache: EmbeddingCache) -> None:
    """The corpus split round robin over ``parts`` databases (bench/layout_build.py)."""
    config = layout_config(root, parts)
    shares = {name: _writes(docs[i::parts], cache) for i, name in enumerate(config.lancedb.databases)}
    await layout_build.build_layout(root / "complete.json", config, shares, len(docs), log, split=parts)


class _PrecomputedQueries:
    """Stands in for the embedder during timing: the query vectors were embedded beforehand."""

    def __init__(self, real, vectors: dict[str, list[float]]) -> None:
        self.identity = real.identity
        self._real = real
        self._vectors = vectors

    async def embed_query(self, text: str) -> list[float]:
        vector = self._vectors.get(text)
        return vector if vector is not None else await self._real.embed_query(text)


class _QueryCounter:
    """Counts the LanceDB queries run (every query, whatever it returns, ends in ``to_batches``)."""

    def __init__(self) -> None:
        self.queries = 0

    def install(self) -> None:
        from lancedb.query import AsyncQueryBase

        original = AsyncQueryBase.to_batches
        counter = self

        async def counted(query, *args, **kwargs):
            counter.queries += 1
            return await original(query, *args, **kwargs)

        AsyncQueryBase.to_batches = counted  # type: ignore[method-assign]


COUNTER = _QueryCounter()


async def _timed(client, query: str, search_type: str, cost: list[float] | None = None) -> float:
    """Wall ms of one search; ``cost`` gains its CPU ms (every thread of the process) and LanceDB queries."""
    queries, cpu = COUNTER.queries, time.process_time()
    started = time.perf_counter()
    await client.search(query, limit=LIMIT, search_type=search_type)
    wall = (time.perf_counter() - started) * 1000
    if cost is not None:
        cost[0] += (time.process_time() - cpu) * 1000
        cost[1] += COUNTER.queries - queries
        cost[2] += 1
    return wall


async def measure(configs: dict[str, Any], queries: list[str], repeats: int, *, search_types) -> dict[str, Any]:
    """Every layout timed query by query in rotation, so load on a shared machine
    falls on all of them alike and the ratios stay fair."""
    from contextlib import AsyncExitStack

    from haiku.rag.client import HaikuRAG

    names = list(configs)
    times: dict[str, dict[str, list[float]]] = {n: {t: [] for t in search_types} for n in names}
    costs = {n: {t: [0.0, 0, 0] for t in search_types} for n in names}  # CPU ms, LanceDB queries, searches
    cold: dict[str, list[float]] = {n: [] for n in names}
    for repeat in range(repeats):
        for name in names[repeat % len(names):] + names[: repeat % len(names)]:
            # Timed from entering: a client over one database opens it on enter, a
            # client over a set on its first search, so both pay for their opens.
            started = time.perf_counter()
            async with HaikuRAG(config=configs[name], read_only=True) as client:
                await client.search(queries[repeat % len(queries)], limit=LIMIT, search_type="hybrid")
                cold[name].append((time.perf_counter() - started) * 1000)
    async with AsyncExitStack() as stack:
        clients = {n: await stack.enter_async_context(HaikuRAG(config=configs[n], read_only=True)) for n in names}
        for search_type in search_types:
            for query in queries[:3]:  # warm-up
                for name in names:
                    await _timed(clients[name], query, search_type)
            for i, query in enumerate(queries):
                for name in names[i % len(names):] + names[: i % len(names)]:
                    cost = costs[name][search_type]
                    times[name][search_type].append(await _timed(clients[name], query, search_type, cost))
    return {
        name: {
            "cold_first_query_ms": statistics.median(cold[name]) if cold[name] else None,
            **{
                t: {
                    "p50_ms": statistics.median(v),
                    "p95_ms": percentile(v, 0.95),
                    "cpu_ms_per_search": costs[name][t][0] / max(1, costs[name][t][2]),
                    "lancedb_queries_per_search": costs[name][t][1] / max(1, costs[name][t][2]),
                }
                for t, v in times[name].items()
            },
        }
        for name in names
    }


def report(results: dict[str, Any], meta: dict[str, Any]) -> str:
    single = results["single"]
    lines = [
        f"SciFact: {meta['documents']} documents (one chunk each), {meta['queries']} queries, limit {LIMIT}; "
        f"{meta['cpus']} CPUs, load average {meta['load']}.",
        "",
        "| layout | vector p50 / p95 | fts p50 / p95 | hybrid p50 / p95 | hybrid end-to-end p50 | cold first query |",
        "|---|---|---|---|---|---|",
    ]
    for name in LAYOUTS:
        r = results[name]
        cells = [f"{r[t]['p50_ms']:.1f} / {r[t]['p95_ms']:.1f} ms" for t in SEARCH_TYPES]
        lines.append(
            f"| {name} | {' | '.join(cells)} | {r['end_to_end']['p50_ms']:.1f} ms | {r['cold_first_query_ms']:.0f} ms |"
        )
    lines += ["", "| ratio to single | vector p50 | fts p50 | hybrid p50 | fts p95 | hybrid p95 "
              "| hybrid end-to-end p50 | cold first query |",
              "|---|---|---|---|---|---|---|---|"]
    for name in [name for name in LAYOUTS if name != "single"]:
        r = results[name]
        ratios = [r[t]["p50_ms"] / single[t]["p50_ms"] for t in SEARCH_TYPES]
        ratios += [r[t]["p95_ms"] / single[t]["p95_ms"] for t in ("fts", "hybrid")]
        ratios.append(r["end_to_end"]["p50_ms"] / single["end_to_end"]["p50_ms"])
        ratios.append(r["cold_first_query_ms"] / single["cold_first_query_ms"])
        lines.append(f"| {name} | " + " | ".join(f"{x:.2f}x" for x in ratios) + " |")
    lines += ["", "| layout | CPU ms per search: vector / fts / hybrid | LanceDB queries per search: vector / fts / hybrid |",
              "|---|---|---|"]
    for name in LAYOUTS:
        r = results[name]
        cpu = " / ".join(f"{r[t]['cpu_ms_per_search']:.1f}" for t in SEARCH_TYPES)
        calls = " / ".join(f"{r[t]['lancedb_queries_per_search']:.2f}" for t in SEARCH_TYPES)
        lines.append(f"| {name} | {cpu} | {calls} |")
    return "\n".join(lines)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scifact", type=Path, default=REPO.parent / "shared" / "data" / "scifact")
    parser.add_argument("--limit", type=int, default=None, help="use the first N documents only")
    parser.add_argument("--queries", type=int, default=100, help="queries timed per search type")
    parser.add_argument("--repeats", type=int, default=5, help="fresh clients timed for the cold first query")
    parser.add_argument("--json", type=Path, default=RESULTS, help="where the figures go")
    args = parser.parse_args()

    import os

    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    from haiku.core.config import AppConfig
    from haiku.core.embedders import get_embedder

    dataset = load_beir(args.scifact)
    docs = dataset.corpus[: args.limit] if args.limit else dataset.corpus
    queries = list(dataset.judged_queries.values())[: args.queries]
    embedder = get_embedder(AppConfig())
    cache = EmbeddingCache.for_embedder(CACHE / "embeddings", embedder)
    embedded = cache.fill([d.full_text for d in docs] + queries, embedder.encode, log=log)  # type: ignore[attr-defined]
    log(f"embedded {embedded} new texts ({len(cache)} cached)")

    query_vectors = dict(zip(queries, cache.get(queries).tolist(), strict=True))
    configs = {}
    for name, parts in LAYOUTS.items():
        root = CACHE / "search" / f"scifact-{len(docs)}" / name
        await build_layout(root, parts, docs, cache)
        configs[name] = layout_config(root, parts)
    import shutil

    for config in configs.values():
        shutil.rmtree(config.data_dir / "cache" / "fts-counts", ignore_errors=True)
    import haiku.rag.client._search as search_module

    COUNTER.install()
    real_get_embedder = search_module.get_embedder
    search_module.get_embedder = lambda cfg: _PrecomputedQueries(real_get_embedder(cfg), query_vectors)
    results = await measure(configs, queries, args.repeats, search_types=SEARCH_TYPES)
    log("measured retrieval")
    search_module.get_embedder = real_get_embedder
    end_to_end = await measure(configs, queries, 0, search_types=("hybrid",))
    for name in LAYOUTS:
        results[name]["end_to_end"] = end_to_end[name]["hybrid"]
    log("measured end to end")

    meta = {
        "documents": len(docs),
        "queries": len(queries),
        "cpus": os.cpu_count(),
        "load": " ".join(f"{x:.1f}" for x in os.getloadavg()),
    }
    text = report(results, meta)
    print(text)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"meta": meta, "results": results}, indent=2) + "\n")


if __name__ == "__main__":
    asyncio.run(main())
