"""The states the metrics show, sampled when they are read (docs/operations.md, "Metrics").

Queue depth, dead files and documents come from the queue file (the same
questions ``status`` asks); chunks from each open database, with a deadline so
a slow store delays a scrape by at most that; readiness as ``/health/ready``
answers it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from haiku.ingester.app import IngesterApp
from haiku.ingester.databases import DatabaseRuntime
from haiku.ingester.metrics import QUEUE_STATES, IngesterMetrics
from haiku.ingester.queue import JobQueue, QueueDatabase
from haiku.ingester.readiness import Readiness

CHUNK_COUNT_TIMEOUT_S = 2.0


@dataclass
class QueueCounts:
    depth: dict[tuple[str, str], int] = field(default_factory=dict)  # (database, state) -> jobs
    dead: dict[str, int] = field(default_factory=dict)  # database -> files whose latest job is dead
    documents: dict[str, int] = field(default_factory=dict)  # database -> documents from its sources


def queue_counts(path: Path, names: list[str]) -> QueueCounts:
    """What the queue file says of ``names``, read through a read-only connection (as ``status`` reads it)."""
    counts = QueueCounts()
    db = QueueDatabase(path, read_only=True)
    marks = ",".join("?" * len(names))
    try:
        for row in db.query(
            f"SELECT database, status, COUNT(*) AS n FROM jobs WHERE status IN ('queued', 'claimed') "
            f"AND database IN ({marks}) GROUP BY database, status",
            names,
        ):
            counts.depth[(row["database"], row["status"])] = row["n"]
        for job in JobQueue(db).dead_jobs(names):
            counts.dead[job.database] = counts.dead.get(job.database, 0) + 1
        for row in db.query(
            f"SELECT database, COUNT(*) AS n FROM sync_state WHERE database IN ({marks}) "
            "AND document_id IS NOT NULL GROUP BY database",
            names,
        ):
            counts.documents[row["database"]] = row["n"]
    finally:
        db.close()
    return counts


async def _chunk_count(runtime: DatabaseRuntime) -> int | None:
    if runtime.store is None:
        return None
    try:
        return await asyncio.wait_for(runtime.store.reads.count_chunks(), CHUNK_COUNT_TIMEOUT_S)
    except Exception:  # a database that cannot answer shows in readiness, not here
        return None


async def sample_state(app: IngesterApp, metrics: IngesterMetrics, readiness: Readiness | None = None) -> None:
    names = list(app.config.ingester.databases)
    counts = QueueCounts()
    if names:
        # On a connection of its own, in a thread: a large queue costs the scrape time, not the loop.
        counts = await asyncio.to_thread(queue_counts, app.pipeline.queue.path, names)
    runtimes = [runtime for name, runtime in list(app.databases.items()) if name in names]
    chunks = dict(zip([r.name for r in runtimes], await asyncio.gather(*map(_chunk_count, runtimes)), strict=True))
    # Everything is known: set the gauges at once, so a scrape never reads them half set.
    metrics.know_databases(names)
    for gauge in (metrics.queue_depth, metrics.dead_files, metrics.documents, metrics.chunks, metrics.database_ready):
        gauge.clear()  # a database a reload removed leaves no stale series
    for name in names:
        for state in QUEUE_STATES:
            metrics.queue_depth.labels(name, state).set(counts.depth.get((name, state), 0))
        metrics.dead_files.labels(name).set(counts.dead.get(name, 0))
        metrics.documents.labels(name).set(counts.documents.get(name, 0))
        if chunks.get(name) is not None:
            metrics.chunks.labels(name).set(chunks[name])
        if readiness is not None and name in readiness.databases:
            metrics.database_ready.labels(name).set(1 if readiness.databases[name] is None else 0)
    replaced = getattr(app.pipeline.engine.converter, "replaced", None)  # the local pool counts them; a Ray cluster restarts its own
    if isinstance(replaced, int):
        metrics.workers_replaced(replaced)
