"""Where a warm federated full-text search's CPU goes, against the engine's floor.

    python bench/federation_profile.py [--limit N] [--layouts single split10 split25] [--queries Q]

Uses the SciFact layouts ``bench/search.py`` builds (run it once first, same
``--limit``). In one process, for each layout, over the same queries, all in
CPU milliseconds per search (``time.process_time``: every thread; load
inflates it far less than wall time):

- the client's warm ``search(query, search_type="fts")``, and its main
  thread's share (``time.thread_time``), split by a cProfile run of as many
  other searches (their words new to the client too) into word statistics, results as objects, arrow-to-Python
  conversion, LanceDB's Python side, fusion and enrichment, and asyncio;
- the engine's floor: the bare ``lance`` dataset of each database's chunks
  table, ``to_table(full_text_query=...)``, one database after another on
  this thread: the plain match of the text with the chunk columns read, the
  boosted query a federated search runs (each word's global-IDF factor) with
  them, and the boosted query returning ids and scores only (what a database
  whose rows are held in memory runs);
- the word statistics alone (``Store.fts_statistics`` of each query's words
  on every database in turn, each query's words new to it as in the search).

The last two layouts also give the cost per added database.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import logging
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.beir import load_beir  # noqa: E402
from bench.search import CACHE, LAYOUTS, layout_config  # noqa: E402

LIMIT = 10


# Where the main thread's profiled time goes, by the file (or built-in) it was spent in.
CATEGORIES = (
    ("word statistics (SQLite)", ("sqlite3", "_word_stats_file.py", "fulltext.py", "global_idf.py", "word_stats.py")),
    ("results as objects (pydantic)", ("pydantic", "schema.py", "models.py")),
    ("arrow to Python (take, to_pylist)", ("pyarrow", "vector_memory.py", "numpy")),
    ("LanceDB's Python side (version, query calls)", ("lancedb", "lance/", "builtins.Table", "fulltext_dataset.py")),
    ("fusion and enrichment", ("fusion/", "search.py", "reads.py", "_document_rows.py")),
    ("asyncio: tasks, wake-ups, thread hand-offs", ("asyncio", "selectors", "socket", "threading", "contextvars",
                                                     "concurrent", "queue")),
)  # fmt: skip


def split_profile(profile: cProfile.Profile) -> dict[str, float]:
    """Shares of the main thread's profiled time (waiting in ``epoll`` left out), by category."""
    import pstats

    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    shares: dict[str, float] = {}
    for (path, _, function), (_, _, tottime, _, _) in stats.items():
        where = f"{path} {function}"
        if "poll" in function and "epoll" in where:
            continue
        label = next((name for name, keys in CATEGORIES if any(key in where for key in keys)), "other Python")
        shares[label] = shares.get(label, 0.0) + tottime
    total = sum(shares.values()) or 1.0
    return {label: value / total for label, value in shares.items()}


def floor(datasets: list[Any], queries: list[str], columns: list[str] | None, boosts: list[list[dict[str, float]]] | None) -> float:
    """CPU ms per search of the bare dataset queries, every database in turn on this thread.

    ``columns=None``: the rows' ids and scores only (the query of a database whose rows are in memory).
    """
    from lance.query import BooleanQuery, MatchQuery, Occur

    def run(i: int, j: int, text: str) -> None:
        if boosts is None:
            query: Any = MatchQuery(text, "search_text")
        else:
            factors = boosts[i][j]
            if not factors:
                return
            query = BooleanQuery([(Occur.SHOULD, MatchQuery(w, "search_text", boost=float(f))) for w, f in factors.items()])
        if columns is None:
            datasets[j].to_table(columns=["_score"], with_row_id=True, limit=LIMIT, full_text_query=query)
        else:
            datasets[j].to_table(columns=[*columns, "_score"], limit=LIMIT, full_text_query=query)

    for j in range(len(datasets)):  # warm
        run(0, j, queries[0])
    started = time.process_time()
    for i, text in enumerate(queries):
        for j in range(len(datasets)):
            run(i, j, text)
    return (time.process_time() - started) * 1000 / len(queries)


async def profile_layout(config: Any, queries: list[str], profiled: list[str], warm: list[str]) -> dict[str, Any]:
    import lance

    from haiku.core.fusion.global_idf import global_idf_boosts
    from haiku.core.scope import DatabaseScope
    from haiku.core.store import Store
    from haiku.core.store.fulltext import query_words
    from haiku.rag.client import HaikuRAG

    # The same databases opened apart: the word statistics each query needs, and its global-IDF factors.
    stores = [await Store.open(ref, config, read_only=True) for ref in DatabaseScope.resolve(config).databases]
    try:
        for text in warm:
            for store in stores:
                await store.fts_statistics(query_words(text))
        started = time.process_time()
        boosts = []
        for text in queries:
            statistics_ = [await store.fts_statistics(query_words(text)) for store in stores]
            boosts.append(global_idf_boosts(statistics_))
        stats_ms = (time.process_time() - started) * 1000 / len(queries)
        columns = stores[0].handles.chunk_columns(False)
        paths = [store.handles.location.path / "chunks.lance" for store in stores]
    finally:
        for store in stores:
            await store.close()
    datasets = [lance.dataset(str(path)) for path in paths]

    profile = cProfile.Profile()
    async with HaikuRAG(config=config, read_only=True) as client:
        for text in warm:
            await client.search(text, limit=LIMIT, search_type="fts")
        walls = []
        started, main_started = time.process_time(), time.thread_time()
        for text in queries:
            t0 = time.perf_counter()
            await client.search(text, limit=LIMIT, search_type="fts")
            walls.append((time.perf_counter() - t0) * 1000)
        total = (time.process_time() - started) * 1000 / len(queries)
        main = (time.thread_time() - main_started) * 1000 / len(queries)
        profile.enable()
        for text in profiled:  # words new to the client, as in the timed searches
            await client.search(text, limit=LIMIT, search_type="fts")
        profile.disable()
    return {
        "databases": len(paths),
        "client_cpu_ms": total,
        "main_thread_cpu_ms": main,
        "wall_p50_ms": statistics.median(walls),
        "word_statistics_ms": stats_ms,
        "floor_match_columns_ms": floor(datasets, queries, columns, None),
        "floor_boosted_columns_ms": floor(datasets, queries, columns, boosts),
        "floor_boosted_ids_ms": floor(datasets, queries, None, boosts),
        "main_thread_shares": split_profile(profile),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scifact", type=Path, default=REPO.parent / "shared" / "data" / "scifact")
    parser.add_argument("--limit", type=int, default=1000, help="the corpus size bench/search.py built")
    parser.add_argument("--layouts", nargs="+", default=["single", "split10", "split25"])
    parser.add_argument("--queries", type=int, default=60)
    args = parser.parse_args()

    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    dataset = load_beir(args.scifact)
    texts = list(dataset.judged_queries.values())
    warm, queries, profiled = texts[-5:], texts[: args.queries], texts[args.queries : 2 * args.queries]
    rows = {}
    for name in args.layouts:
        root = CACHE / "search" / f"scifact-{args.limit}" / name
        rows[name] = await profile_layout(layout_config(root, LAYOUTS[name]), queries, profiled, warm)
        print(name, rows[name], file=sys.stderr, flush=True)
    import os

    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}; {len(queries)} queries, limit {LIMIT}")
    print("")
    print("| CPU ms per search | " + " | ".join(f"{rows[n]['databases']} db" for n in rows) + " |")
    print("|---|" + "---:|" * len(rows))

    def line(title: str, values: list[float]) -> None:
        print(f"| {title} | " + " | ".join(f"{v:.2f}" for v in values) + " |")

    r = list(rows.values())
    line("federated full-text search, every thread", [x["client_cpu_ms"] for x in r])
    line("engine floor: bare dataset, MatchQuery, columns read", [x["floor_match_columns_ms"] for x in r])
    line("engine floor: bare dataset, boosted query, columns read", [x["floor_boosted_columns_ms"] for x in r])
    line("engine floor: bare dataset, boosted query, ids and scores", [x["floor_boosted_ids_ms"] for x in r])
    line("word statistics (fts_statistics, every database in turn)", [x["word_statistics_ms"] for x in r])
    line("main thread (Python, asyncio), all of it", [x["main_thread_cpu_ms"] for x in r])
    labels = [name for name, _ in CATEGORIES] + ["other Python"]
    for label in labels:
        line(f"  of which {label}", [x["main_thread_cpu_ms"] * x["main_thread_shares"].get(label, 0.0) for x in r])
    line("wall p50 ms", [x["wall_p50_ms"] for x in r])
    if len(r) >= 2:
        a, b = r[-2], r[-1]
        added = b["databases"] - a["databases"]
        print("")
        print(f"per added database ({a['databases']} to {b['databases']}), CPU ms:")
        for key in ("client_cpu_ms", "floor_boosted_ids_ms", "floor_boosted_columns_ms", "word_statistics_ms",
                    "main_thread_cpu_ms"):  # fmt: skip
            print(f"- {key}: {(b[key] - a[key]) / added:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
