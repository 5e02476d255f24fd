"""The states the metrics show, sampled when they are read (docs/operations.md, "Metrics").

Queue depth, dead files and documents come from the queue file (the same
questions ``status`` asks); chunks from each open database, with a deadline so
a slow store delays a scrape by at most that; readiness as ``/health/ready``
answers it.
"""

from __future__ import annotations

import asyncio
import contextlib

from haiku.ingester.app import IngesterApp
from haiku.ingester.metrics import QUEUE_STATES, IngesterMetrics
from haiku.ingester.readiness import Readiness

CHUNK_COUNT_TIMEOUT_S = 2.0


async def sample_state(app: IngesterApp, metrics: IngesterMetrics, readiness: Readiness | None = None) -> None:
    names = list(app.config.ingester.databases)
    metrics.know_databases(names)
    for gauge in (metrics.queue_depth, metrics.dead_files, metrics.documents, metrics.chunks, metrics.database_ready):
        gauge.clear()  # a database a reload removed leaves no stale series
    queue = app.queue
    if queue is not None and names:
        marks = ",".join("?" * len(names))
        for name in names:
            for state in QUEUE_STATES:
                metrics.queue_depth.labels(name, state).set(0)
            metrics.dead_files.labels(name).set(0)
            metrics.documents.labels(name).set(0)
        for row in queue.db.query(
            f"SELECT database, status, COUNT(*) AS n FROM jobs WHERE status IN ('queued', 'claimed') "
            f"AND database IN ({marks}) GROUP BY database, status",
            names,
        ):
            metrics.queue_depth.labels(row["database"], row["status"]).set(row["n"])
        for database, _source, _uri in queue.jobs.dead_files(names):
            metrics.dead_files.labels(database).inc()
        for row in queue.db.query(
            f"SELECT database, COUNT(*) AS n FROM sync_state WHERE database IN ({marks}) "
            "AND document_id IS NOT NULL GROUP BY database",
            names,
        ):
            metrics.documents.labels(row["database"]).set(row["n"])
    for name, runtime in list(app.databases.items()):
        if runtime.store is None:
            continue
        with contextlib.suppress(Exception):  # a database that cannot answer shows in readiness, not here
            metrics.chunks.labels(name).set(await asyncio.wait_for(runtime.store.count_chunks(), CHUNK_COUNT_TIMEOUT_S))
    if readiness is not None:
        for name, problem in readiness.databases.items():
            metrics.database_ready.labels(name).set(1 if problem is None else 0)
    converter = app.engine.converter if app.engine is not None else None
    replaced = getattr(converter, "replaced", None)  # the local pool counts them; a Ray cluster restarts its own
    if isinstance(replaced, int):
        metrics.workers_replaced(replaced)
