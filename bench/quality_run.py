"""Run every query through ``HaikuRAG.search`` and turn chunk results into document rankings."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.metrics import dedupe
from bench.quality_build import doc_id_of


@dataclass(frozen=True)
class Arm:
    """One way of searching: a search type under one fusion setting."""

    name: str
    search_type: str
    fusion: str = "rrf"
    fts_idf: str = "global"


ARMS: tuple[Arm, ...] = (
    Arm("vector", "vector"),
    Arm("fts", "fts"),
    Arm("hybrid", "hybrid"),
    # The original rules (docs/fusion.md), measured for comparison (quality lost, latency saved):
    # each database's own BM25 statistics, and hybrid re-sorted by cosine.
    Arm("fts-local-idf", "fts", fts_idf="local"),
    Arm("hybrid-local-idf", "hybrid", fts_idf="local"),
    Arm("hybrid-cosine", "hybrid", fusion="cosine"),
)


@dataclass
class ArmRun:
    runs: dict[str, list[str]] = field(default_factory=dict)  # query id -> document ids, best first
    latencies_ms: list[float] = field(default_factory=list)

    def latency_summary(self) -> dict[str, float]:
        values = sorted(self.latencies_ms)
        if not values:
            return {}
        p95 = values[min(len(values) - 1, round(0.95 * (len(values) - 1)))]
        return {
            "median_ms": round(statistics.median(values), 2),
            "mean_ms": round(statistics.fmean(values), 2),
            "p95_ms": round(p95, 2),
        }


def document_ranking(results: Sequence[Any]) -> list[str]:
    """Corpus ids in rank order, each document at its best chunk."""
    return dedupe(i for i in (doc_id_of(r.document_uri) for r in results) if i is not None)


async def run_arm(
    config: Any,
    arm: Arm,
    queries: Mapping[str, str],
    limit: int,
    log: Callable[[str], None],
    label: str,
) -> ArmRun:
    """Every query once, one at a time (so latencies are not contended), through one open client."""
    from haiku.rag.client import HaikuRAG

    out = ArmRun()
    async with HaikuRAG(config=config, read_only=True) as client:
        # Warm-up: opens every database and loads the model outside the timed loop.
        await client.search("warm up", limit=limit, search_type=arm.search_type)
        started = time.perf_counter()
        for i, (qid, text) in enumerate(queries.items(), 1):
            t0 = time.perf_counter()
            results = await client.search(text, limit=limit, search_type=arm.search_type)
            out.latencies_ms.append((time.perf_counter() - t0) * 1000)
            out.runs[qid] = document_ranking(results)
            if i % 100 == 0 or i == len(queries):
                log(f"[{label} {arm.name}] {i}/{len(queries)} queries ({time.perf_counter() - started:.0f}s)")
    return out
