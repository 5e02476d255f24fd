"""What every command that runs jobs shares: stop on a signal, drain the queue, hand claims back.

``serve`` (``haiku.ingester.daemon``), ``run-batch`` (``haiku.ingester.batch``)
and ``reprocess`` (``haiku.ingester.reprocess``) sit above this module and
never import each other (docs/design.md, "The ingester").
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable, Iterator
from typing import Any

from haiku.core.config import AppConfig
from haiku.ingester.app import IngesterApp
from haiku.ingester.logs import get_logger
from haiku.ingester.queue import Job
from haiku.ingester.workers import WorkerPool

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def in_flight(config: AppConfig) -> int:
    """How many jobs run at once: enough to keep the conversion workers and the encoder busy together.

    Jobs, not texts: the configured batch, whatever the device (a GPU's batch of
    4,096 texts fills from a few hundred documents).
    """
    return max(config.ingester.workers.worker_count, 8 * config.embeddings.batch_size)


def worker_pool(
    app: IngesterApp,
    *,
    on_finished: Callable[[Job, str], None] | None = None,
    stop_when_engine_lost: bool = False,
) -> WorkerPool:
    """A worker pool over the started app's pipeline and databases."""
    return WorkerPool(
        app.pipeline,
        app.databases,
        app.config.ingester.workers,
        in_flight=in_flight(app.config),
        on_finished=on_finished,
        stop_when_engine_lost=stop_when_engine_lost,
    )


@contextlib.contextmanager
def stop_on_signals(stop: asyncio.Event | None = None, *, announce: bool = False) -> Iterator[asyncio.Event]:
    """An event SIGTERM and SIGINT set (``stop``, or a new one), for as long as the block runs.

    With ``announce`` the first signal is logged ("stopping", with its name).
    """
    event = stop if stop is not None else asyncio.Event()
    log = get_logger()

    def handle(sig: signal.Signals) -> None:
        if announce and not event.is_set():
            log.info("stopping", signal=sig.name)
        event.set()

    loop = asyncio.get_running_loop()
    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, handle, sig)
    try:
        yield event
    finally:
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)


class Progress:
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



async def stop_workers(workers: WorkerPool, config: AppConfig) -> int:
    """Give in-flight jobs ``ingester.workers.shutdown_grace_s`` to finish; the rest give their claims back.

    Returns how many claims were released.
    """
    return await workers.drain(config.ingester.workers.shutdown_grace_s)


async def drain_queue(
    app: IngesterApp, stop: asyncio.Event, names: list[str], *, progress: bool | None, command: str
) -> WorkerPool:
    """Run the queued jobs of ``names`` until none is left, or ``stop`` is set (the rest stay queued).

    A progress bar shows on stderr when it is a terminal. A full disk stops it and is raised.
    """

    jobs = app.pipeline.queue.jobs
    bar = Progress(sys.stderr.isatty() if progress is None else progress)

    def finished(job: Job, status: str) -> None:
        bar.advance(lambda: jobs.live_count(names))

    workers = worker_pool(app, on_finished=finished, stop_when_engine_lost=True)
    bar.start(jobs.live_count(names))
    heartbeat = asyncio.create_task(workers.heartbeat_forever())
    try:
        await workers.run(stop, until_drained=True)
        if workers.fatal is not None:  # a full disk, a lost cluster: stop now, the unfinished jobs stay queued
            await stop_workers(workers, app.config)
            raise workers.fatal
        if stop.is_set():
            released = await stop_workers(workers, app.config)
            get_logger().warning(f"{command} interrupted", released=released)
    finally:
        heartbeat.cancel()
        with contextlib.suppress(BaseException):
            await heartbeat
        bar.stop()
    return workers
