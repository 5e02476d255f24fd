"""``run-batch``: one sweep of every source, drain the queue, exit (docs/ingester.md)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from haiku.core.config import AppConfig
from haiku.ingester.app import IngesterApp
from haiku.ingester.discovery import sweep_once
from haiku.ingester.errors import SweepError
from haiku.ingester.logs import get_logger
from haiku.ingester.owner import OwnerRecord
from haiku.ingester.queue import Job
from haiku.ingester.workers import WorkerPool


@dataclass
class BatchReport:
    succeeded: int = 0
    dead: int = 0
    chunks: int = 0
    embedded: int = 0  # chunk texts sent to the encoder
    reused: int = 0  # chunks that kept their stored vector (see haiku.ingester.pipeline.reuse)
    sweep_failures: list[SweepError] = field(default_factory=list)
    dead_jobs: list[tuple[str, str, str, str]] = field(default_factory=list)
    # Files dead before this run at the same revision that died again: a file nobody
    # changed is no new failure, so a cron job does not fail on every run because of it.
    still_dead: int = 0
    still_dead_jobs: list[tuple[str, str, str, str]] = field(default_factory=list)
    interrupted: bool = False

    @property
    def ok(self) -> bool:
        return not self.dead and not self.sweep_failures and not self.interrupted

    def summary(self) -> str:
        line = f"Batch complete: {self.succeeded} succeeded, {self.dead} dead"
        if self.still_dead:
            line += f", {self.still_dead} still dead (unchanged since an earlier run)"
        return line


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


async def run_batch(config: AppConfig, database_name: str | None = None, *, progress: bool | None = None) -> BatchReport:
    log = get_logger()
    app = IngesterApp(config, database_name=database_name)
    await app.start(require_databases=True)
    owner = OwnerRecord.take(config.queue_path, "run-batch")  # for `status`
    report = BatchReport()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    bar = _Progress(sys.stderr.isatty() if progress is None else progress)
    try:
        assert app.queue is not None
        names = list(app.databases)
        dead_before = app.queue.jobs.dead_files(names)
        for runtime in app.databases.values():
            for source in runtime.sources.values():
                try:
                    await sweep_once(app, source)
                except SweepError as exc:
                    report.sweep_failures.append(exc)

        def finished(job: Job, status: str) -> None:
            bar.advance(lambda: app.queue.jobs.live_count(names) if app.queue else 0)

        from haiku.core.embedders import get_embedder

        workers = WorkerPool(
            app, in_flight=max(config.ingester.workers.worker_count, 8 * get_embedder(config).batch_size),
            on_finished=finished,
        )
        bar.start(app.queue.jobs.live_count(names))
        heartbeat = asyncio.create_task(workers.heartbeat_forever())
        try:
            await workers.run(stop, until_drained=True)
            if workers.fatal is not None:  # a full disk: stop now, the unfinished jobs stay queued
                await workers.drain(config.ingester.workers.shutdown_grace_s)
                raise workers.fatal
            if stop.is_set():
                report.interrupted = True
                released = await workers.drain(config.ingester.workers.shutdown_grace_s)
                log.warning("run-batch interrupted", released=released)
        finally:
            heartbeat.cancel()
            with contextlib.suppress(BaseException):
                await heartbeat
            bar.stop()
        report.succeeded = workers.tally.succeeded
        report.chunks = workers.tally.chunks
        dead_after = app.queue.jobs.dead_files(names)
        for dead_job in workers.tally.dead_jobs:
            key = dead_job[:3]
            if key in dead_before and dead_before[key] == dead_after.get(key, object()):
                report.still_dead_jobs.append(dead_job)
            else:
                report.dead_jobs.append(dead_job)
        report.still_dead = len(report.still_dead_jobs)
        report.dead = workers.tally.dead - report.still_dead
        report.embedded = workers.tally.embedded
        report.reused = workers.tally.reused
        app.queue.jobs.prune(config.ingester.queue.retention_days)
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        await app.close()
        if owner is not None:
            owner.release()
    return report
