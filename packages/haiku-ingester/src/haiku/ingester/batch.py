"""``run-batch``: one sweep of every source, drain the queue, exit (docs/ingester.md)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from haiku.core.config import AppConfig
from haiku.ingester.app import IngesterApp
from haiku.ingester.checks import check_roots
from haiku.ingester.discovery import sweep_once
from haiku.ingester.errors import SweepError
from haiku.ingester.logs import get_logger
from haiku.ingester.owner import OwnerRecord
from haiku.ingester.queue import Job
from haiku.ingester.report import BatchReport, FileAction
from haiku.ingester.workers import WorkerPool

__all__ = ["BatchReport", "drain_queue", "run_batch", "stop_on_signals"]


class _Progress:
    """A rich progress bar on stderr, only when stderr is a terminal.

    Until the first file is done it says why it waits: the first job starts the
    conversion workers and loads the embedding model, which takes a while.
    """

    WAITING = "starting converters, loading the embedding model…"
    WORKING = "ingesting"

    def __init__(self, enabled: bool, console: Any = None) -> None:
        self._bar = None
        self._task = None
        self.finished = 0
        if enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=console or Console(stderr=True),
                transient=True,
            )

    def start(self, total: int) -> None:
        if self._bar is not None:
            self._bar.start()
            self._task = self._bar.add_task(self.WAITING if total else self.WORKING, total=total)

    def advance(self, live: Callable[[], int]) -> None:
        self.finished += 1
        if self._bar is not None and self._task is not None:
            self._bar.update(
                self._task, completed=self.finished, total=self.finished + live(), description=self.WORKING
            )

    def stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()


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
        with stop_on_signals() as stop:
            assert app.queue is not None
            names = list(app.databases)
            dead_before = app.queue.jobs.dead_files(names)
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
        dead_after = app.queue.jobs.dead_files(names)
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
            known = app.queue.sync.get(*key) is not None
            action = "delete" if job.op == "delete" else ("update" if known else "add")
            entry.files.append(
                FileAction(job.database, job.source_id, job.uri, action, "still_dead" if still else "dead", error)
            )
        app.queue.jobs.prune(config.ingester.queue.retention_days)
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


@contextlib.contextmanager
def stop_on_signals() -> Iterator[asyncio.Event]:
    """An event SIGTERM and SIGINT set, for as long as the block runs."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        yield stop
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)


async def drain_queue(
    app: IngesterApp, stop: asyncio.Event, names: list[str], *, progress: bool | None, command: str
) -> WorkerPool:
    """Run the queued jobs of ``names`` until none is left, or ``stop`` is set (the rest stay queued).

    A progress bar shows on stderr when it is a terminal. A full disk stops it and is raised.
    """

    config = app.config
    assert app.queue is not None
    bar = _Progress(sys.stderr.isatty() if progress is None else progress)

    def finished(job: Job, status: str) -> None:
        bar.advance(lambda: app.queue.jobs.live_count(names) if app.queue else 0)

    workers = WorkerPool(
        app, in_flight=max(config.ingester.workers.worker_count, 8 * config.embeddings.batch_size),
        on_finished=finished, stop_when_engine_lost=True,
    )
    bar.start(app.queue.jobs.live_count(names))
    heartbeat = asyncio.create_task(workers.heartbeat_forever())
    try:
        await workers.run(stop, until_drained=True)
        if workers.fatal is not None:  # a full disk, a lost cluster: stop now, the unfinished jobs stay queued
            await workers.drain(config.ingester.workers.shutdown_grace_s)
            raise workers.fatal
        if stop.is_set():
            released = await workers.drain(config.ingester.workers.shutdown_grace_s)
            get_logger().warning(f"{command} interrupted", released=released)
    finally:
        heartbeat.cancel()
        with contextlib.suppress(BaseException):
            await heartbeat
        bar.stop()
    return workers
