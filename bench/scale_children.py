"""The scale benchmark's measurements that need a process of their own (bench/scale.py).

    python bench/scale_children.py COMMAND JSON_ARGS

Each command prints one JSON line last. A fresh process gives a clean peak
memory (its own ``VmHWM``, bench/process_memory.py) and a cold start: index builds, a search process's
peak memory, vacuum (with a reader in another process), and the client's
cold first query over several databases.
"""

from __future__ import annotations

import asyncio
import json
import logging
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
RSS_QUERIES = 100  # per search type: enough to load every index and cache a search touches
sys.path.insert(0, str(REPO))

from bench.process_memory import current_rss_mib, peak_rss_mib  # noqa: E402
from bench.scale_config import config_for  # noqa: E402


async def _open(root: str, *, read_only: bool):
    from haiku.core.scope import DatabaseScope
    from haiku.core.store import Store

    config = config_for(Path(root))
    return await Store.open(DatabaseScope.resolve(config).databases[0], config, read_only=read_only)


def _queries(path: str) -> tuple[list[str], np.ndarray]:
    texts = json.loads(Path(path).with_suffix(".json").read_text())
    return texts, np.load(Path(path).with_suffix(".npy"))


async def index(args: dict[str, Any]) -> dict[str, Any]:
    """``create-index``: build time and peak memory."""
    store = await _open(args["root"], read_only=False)
    before = round(peak_rss_mib())
    started = time.perf_counter()
    await store.indexes.create_index()
    seconds = time.perf_counter() - started
    await store.close()
    return {"seconds": round(seconds, 2), "peak_rss_mib": round(peak_rss_mib()), "rss_before_mib": before}


async def search_rss(args: dict[str, Any]) -> dict[str, Any]:
    """A search process's peak memory: open, then every query of each search type."""
    texts, vectors = _queries(args["queries"])
    before = round(current_rss_mib())
    store = await _open(args["root"], read_only=True)
    for search_type in ("vector", "fts", "hybrid"):
        for text, vector in zip(texts[:RSS_QUERIES], vectors[:RSS_QUERIES], strict=True):
            await store.search(text, query_vector=vector.tolist(), search_type=search_type, limit=10)
    await store.close()
    return {"peak_rss_mib": round(peak_rss_mib()), "rss_before_open_mib": before}


async def vacuum(args: dict[str, Any]) -> dict[str, Any]:
    """``vacuum`` at the configured retention: time and peak memory."""
    store = await _open(args["root"], read_only=False)
    before = round(peak_rss_mib())
    started = time.perf_counter()
    report = await store.vacuum()
    seconds = time.perf_counter() - started
    await store.close()
    return {"seconds": round(seconds, 2), "peak_rss_mib": round(peak_rss_mib()), "rss_before_mib": before,
            "versions_removed": report.versions_removed if report else None}


async def reader(args: dict[str, Any]) -> dict[str, Any]:
    """Search until the stop file appears; every answer must be whole: hits, each document with all its chunks."""
    texts, vectors = _queries(args["queries"])
    stop, ready = Path(args["stop"]), Path(args["ready"])
    store = await _open(args["root"], read_only=True)
    answered = errors = partial = 0
    first_error = None
    turn = 0
    while not stop.exists():
        k = turn % len(texts)
        turn += 1
        try:
            hits = await store.search(texts[k], query_vector=vectors[k].tolist(), search_type="hybrid", limit=10)
            chunks = await store.reads.get_chunks(hits[0].document_id) if hits else []
            if len(chunks) != args["chunks_per_document"]:
                partial += 1
            else:
                answered += 1
        except Exception as exc:  # counted: the point is that none happen
            errors += 1
            first_error = first_error or f"{type(exc).__name__}: {exc}"[:300]
        if turn == 3:
            ready.touch()
    await store.close()
    return {"answered": answered, "errors": errors, "partial": partial, "first_error": first_error}


async def cold(args: dict[str, Any]) -> dict[str, Any]:
    """The client's first query in a fresh process (model already loaded), then its warm p50."""
    from haiku.core.config import load_config
    from haiku.core.embedders import get_embedder
    from haiku.rag.client import HaikuRAG

    texts, _ = _queries(args["queries"])
    config = load_config(args["config"])
    await get_embedder(config).embed_query("warm the encoder up")
    sources = args["sources"]
    before = round(current_rss_mib())
    started = time.perf_counter()
    async with HaikuRAG(config=config, read_only=True) as client:
        first = await client.search(texts[0], limit=10, search_type="hybrid", sources=sources)
        cold_ms = (time.perf_counter() - started) * 1000
        times = []
        for text in texts[1 : 1 + args["warm"]]:
            began = time.perf_counter()
            await client.search(text, limit=10, search_type="hybrid", sources=sources)
            times.append((time.perf_counter() - began) * 1000)
        open_rss = round(current_rss_mib())
    return {"cold_ms": round(cold_ms, 1), "warm_p50_ms": round(statistics.median(times), 1), "hits": len(first),
            "rss_before_open_mib": before, "rss_open_mib": open_rss, "peak_rss_mib": round(peak_rss_mib())}


# --- the parent's side ---------------------------------------------------------------------------


def child(command: str, args: dict[str, Any], timeout: float = 3600) -> dict[str, Any]:
    """Run one command in a fresh process; its JSON answer."""
    done = subprocess.run([sys.executable, __file__, command, json.dumps(args)], capture_output=True, text=True,
                          timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{command} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def save_queries(path: Path, texts: list[str], vectors: np.ndarray) -> Path:
    """The queries for the child processes: ``path.json`` (texts) and ``path.npy`` (vectors)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.with_suffix(".json").write_text(json.dumps(texts))
    np.save(path.with_suffix(".npy"), vectors)
    return path


def vacuum_with_reader(root: Path, queries: Path, chunks_per_document: int) -> dict[str, Any]:
    """Vacuum in one process while another searches throughout; both reports."""
    with tempfile.TemporaryDirectory() as scratch:
        stop, ready = Path(scratch) / "stop", Path(scratch) / "ready"
        args = {"root": str(root), "queries": str(queries), "stop": str(stop), "ready": str(ready),
                "chunks_per_document": chunks_per_document}
        process = subprocess.Popen([sys.executable, __file__, "reader", json.dumps(args)], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        try:
            while not ready.exists():
                if process.poll() is not None:
                    raise RuntimeError(f"the reader stopped:\n{process.stderr.read()[-2000:]}")
                time.sleep(0.2)
            vacuum = child("vacuum", {"root": str(root)})
        finally:
            stop.touch()
            out, err = process.communicate(timeout=600)
        if process.returncode != 0:
            raise RuntimeError(f"the reader failed:\n{err[-2000:]}")
    return {**vacuum, "reader": json.loads(out.strip().splitlines()[-1])}


COMMANDS = {"index": index, "search_rss": search_rss, "vacuum": vacuum, "reader": reader, "cold": cold}


def main() -> None:
    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    command, args = sys.argv[1], json.loads(sys.argv[2])
    print(json.dumps(asyncio.run(COMMANDS[command](args))), flush=True)


if __name__ == "__main__":
    main()
