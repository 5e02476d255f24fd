"""``run-batch``: one sweep of every source, drain the queue, exit (docs/ingester.md)."""

from __future__ import annotations

from pathlib import Path

from haiku.core.config import AppConfig
from haiku.ingester.app import IngesterApp
from haiku.ingester.checks import check_roots
from haiku.ingester.discovery import sweep_once
from haiku.ingester.errors import SweepError
from haiku.ingester.logs import get_logger
from haiku.ingester.owner import OwnerRecord
from haiku.ingester.report import BatchReport, FileAction
from haiku.ingester.runner import drain_queue, stop_on_signals

__all__ = ["BatchReport", "run_batch"]


async def run_batch(
    config: AppConfig,
    database_name: str | None = None,
    *,
    progress: bool | None = None,
    metrics_file: Path | None = None,
) -> BatchReport:
    """Sweep, drain, report. Every source root is checked first: a missing one creates nothing.

    With ``metrics_file``, the run's metrics are written there at its end, in the
    format of node-exporter's textfile collector (docs/operations.md).
    """
    app = IngesterApp(config, database_name=database_name)
    check_roots(config, app.selected_names())
    await app.start(require_databases=True)
    owner = OwnerRecord.take(config.queue_path, "run-batch")  # for `status`
    report = BatchReport()
    try:
        queue = app.pipeline.queue
        with stop_on_signals() as stop:
            names = list(app.databases)
            dead_before = queue.jobs.dead_files(names)
            for name, runtime in app.databases.items():
                database = report.database(name)
                for source in runtime.sources.values():
                    try:
                        result = await sweep_once(app, source)
                    except SweepError as exc:
                        database.sweep_failures.append(exc)
                        continue
                    database.planned["add"] += result.added
                    database.planned["update"] += result.updated
                    database.planned["delete"] += result.deletes
                    database.skip(source.id, result.skipped)
            workers = await drain_queue(app, stop, names, progress=progress, command="run-batch")
            report.interrupted = stop.is_set()
        dead_after = queue.jobs.dead_files(names)
        for name in names:
            report.database(name).jobs = workers.tally.of(name)
        for (name, source_id), tally in workers.tally.skipped.items():
            report.database(name).skip(source_id, tally)
        for job, error in workers.tally.dead_jobs:
            # Files dead before this run at the same revision that died again: a file nobody
            # changed is no new failure, so a cron job does not fail on every run because of it.
            key = (job.database, job.source_id, job.uri)
            still = key in dead_before and dead_before[key] == dead_after.get(key, object())
            entry = report.database(job.database)
            entry.still_dead += still
            known = queue.sync.get(*key) is not None
            action = "delete" if job.op == "delete" else ("update" if known else "add")
            entry.files.append(
                FileAction(job.database, job.source_id, job.uri, action, "still_dead" if still else "dead", error)
            )
        queue.jobs.prune(config.ingester.queue.retention_days)
        if metrics_file is not None:
            await write_metrics_file(app, metrics_file)
    finally:
        await app.close()
        if owner is not None:
            owner.release()
    return report


async def write_metrics_file(app: IngesterApp, path: Path) -> None:
    """The run's metrics, with the queue's and databases' states as they are now, written whole to ``path``."""
    from haiku.ingester.metrics_sample import sample_state
    from haiku.ingester.readiness import check_readiness

    await sample_state(app, app.metrics, await check_readiness(app, None))
    app.metrics.batch_ended()
    app.metrics.write_textfile(path)
    get_logger().info("metrics written", file=str(path))
