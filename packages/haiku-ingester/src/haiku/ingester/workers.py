"""Workers: claim jobs, run them, finish them; renew leases; reap lost claims (docs/ingester.md).

Jobs run as tasks on the event loop, up to ``in_flight`` at once: enough to keep
the conversion workers and the encoder busy together. The CPU-bound steps run
in worker processes (conversion) and a thread (the encoder), so the loop only
coordinates.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from haiku.core.config import RetryConfig, WorkersConfig
from haiku.ingester.databases import DatabaseRuntime, serving_names
from haiku.ingester.errors import DiskFullError, EngineUnavailableError, IngesterError, is_disk_full
from haiku.ingester.logs import get_logger
from haiku.ingester.pipeline.parts import Pipeline
from haiku.ingester.pipeline.process import JobReleased
from haiku.ingester.queue import Job, WrittenCounts
from haiku.ingester.retry import backoff_delay, describe, retry_delay
from haiku.ingester.skips import SkipReason, SkipTally


@dataclass
class Counts:
    """What jobs did, for one database or for all."""

    succeeded: int = 0
    written: int = 0  # documents written (new or changed content)
    deleted: int = 0  # documents removed
    dead: int = 0
    retried: int = 0  # failures that were queued again for a later attempt
    chunks: int = 0
    embedded: int = 0  # chunk texts sent to the encoder
    reused: int = 0  # chunks that kept their stored vector

    def as_dict(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


@dataclass
class Tally:
    """Counts of this process's finished jobs, in all and per database, and its dead jobs."""

    total: Counts = field(default_factory=Counts)
    per_database: dict[str, Counts] = field(default_factory=dict)
    dead_jobs: list[tuple[Job, str]] = field(default_factory=list)  # each dead job, with its error
    skipped: dict[tuple[str, str], SkipTally] = field(default_factory=dict)  # (database, source) -> files skipped

    def skip(self, job: Job, reason: SkipReason) -> None:
        name = job.uri.rsplit("/", 1)[-1]  # its extension is what a report names
        self.skipped.setdefault((job.database, job.source_id), SkipTally()).add(reason, name)

    def add(self, database: str, **counts: int) -> None:
        own = self.per_database.setdefault(database, Counts())
        for name, value in counts.items():
            setattr(self.total, name, getattr(self.total, name) + value)
            setattr(own, name, getattr(own, name) + value)

    def of(self, database: str) -> Counts:
        return self.per_database.get(database, Counts())


class EngineWait:
    """Back-off while the engine (a Ray cluster) is unreachable: no job is claimed until ``until``.

    Each loss in a row waits longer, as ``ingester.workers.retry`` says (its
    ``max_attempts`` does not apply: a cluster fault is not the file's); a job
    that finishes resets it. ``stop`` (run-batch) ends the run instead.
    """

    def __init__(self, policy: RetryConfig, *, stop: bool) -> None:
        self.policy = policy
        self.stop = stop
        self.until = 0.0
        self._losses = 0

    def waiting(self) -> bool:
        return time.time() < self.until

    def lost(self) -> float | None:
        """Note a loss; the new wait in seconds, or None when one is already running."""
        if self.waiting():
            return None
        self._losses += 1
        delay = backoff_delay(self.policy, self._losses)
        self.until = time.time() + delay
        return delay

    def reset(self) -> None:
        self._losses = 0


class WorkerPool:
    """Runs the jobs of ``databases`` through ``pipeline``.

    ``databases`` is the app's own mapping, read as it is now: a reload adds and
    removes databases while the pool runs.
    """

    def __init__(
        self,
        pipeline: Pipeline,
        databases: Mapping[str, DatabaseRuntime],
        settings: WorkersConfig,
        *,
        in_flight: int,
        on_finished: Callable[[Job, str], None] | None = None,
        stop_when_engine_lost: bool = False,
    ):
        self.pipeline = pipeline
        self.databases = databases
        self.settings = settings
        self.in_flight = max(1, in_flight)
        self.tally = Tally()
        self._tasks: dict[int, asyncio.Task] = {}
        self._claims: dict[int, Job] = {}
        self._on_finished = on_finished
        self.log = get_logger()
        # Set when a write found the disk full (or, for run-batch, the engine is gone):
        # the claim loop ends and the caller raises it.
        self.fatal: IngesterError | None = None
        self.engine_wait = EngineWait(self.settings.retry, stop=stop_when_engine_lost)

    @property
    def busy(self) -> int:
        return len(self._tasks)

    # --- the claim loop -------------------------------------------------------------
    async def run(self, stop: asyncio.Event, *, until_drained: bool = False) -> None:
        """Claim and run jobs until ``stop`` is set (or, with ``until_drained``, the queue is empty)."""
        pipeline = self.pipeline
        while not stop.is_set() and self.fatal is None:
            pipeline.wake.clear()
            names = serving_names(self.databases)
            if self.engine_wait.waiting():
                await self._sleep(stop, names, until=self.engine_wait.until)
                continue
            free = self.in_flight - len(self._tasks)
            try:
                jobs = (
                    pipeline.queue.jobs.claim(names, limit=free, lease_ttl_s=self.settings.lease_ttl_s)
                    if free > 0
                    else []
                )
            except Exception as exc:
                if not is_disk_full(exc):
                    raise
                self._disk_full(None, exc)
                return
            if jobs:
                pipeline.warmup.begin()
            for job in jobs:
                self._claims[job.id] = job
                self._tasks[job.id] = asyncio.create_task(self._run_job(job), name=f"job-{job.id}")
            if jobs:
                continue
            if until_drained and not self._tasks and pipeline.queue.jobs.live_count(names) == 0:
                return
            await self._sleep(stop, names)

    async def _sleep(self, stop: asyncio.Event, names: list[str], until: float | None = None) -> None:
        timeout = 1.0
        ready_at = self.pipeline.queue.jobs.next_ready_at(names) if len(self._tasks) < self.in_flight else None
        ready_at = until if until is not None else ready_at
        if ready_at is not None:
            timeout = min(timeout, max(ready_at - time.time(), 0.01))
        waiters = [asyncio.ensure_future(self.pipeline.wake.wait()), asyncio.ensure_future(stop.wait())]
        try:
            await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()

    # --- one job --------------------------------------------------------------------
    async def _run_job(self, job: Job) -> None:
        runtime = self.databases.get(job.database)
        log = self.log.bind(database=job.database, source=job.source_id, uri=job.uri, op=job.op, job=job.id)
        try:
            await self._run_claimed(job, runtime, log)
        except Exception as exc:
            if not is_disk_full(exc):
                raise
            self._disk_full(job, exc)
        finally:
            self._tasks.pop(job.id, None)
            self._claims.pop(job.id, None)
            self.pipeline.wake.set()

    async def _run_claimed(self, job: Job, runtime: DatabaseRuntime | None, log) -> None:
        queue, metrics = self.pipeline.queue, self.pipeline.metrics
        source = runtime.source_for(job.source_id) if runtime is not None else None
        if runtime is None or not runtime.accepting or source is None:
            queue.jobs.release(job)
            return
        runtime.job_started()
        try:
            outcome = await self.pipeline.processor.run(job, source, runtime.store)
        except asyncio.CancelledError:
            raise
        except JobReleased:
            queue.jobs.release(job)
        except EngineUnavailableError as exc:
            queue.jobs.release(job)  # the cluster's fault, not the file's: the attempt does not count
            self._engine_lost(exc)
        except Exception as exc:
            if is_disk_full(exc):
                raise  # not the job's fault: stop instead of retrying it into the dead
            self._failed(job, exc, source.retry, log)
        else:
            written = (
                WrittenCounts(outcome.chunks, outcome.embedded, outcome.reused)
                if outcome.action == "written"
                else None
            )
            self.engine_wait.reset()
            if queue.jobs.complete(job, outcome.sync, written):
                if outcome.skip is not None:  # counted as skipped (its reason), not as succeeded
                    self.tally.skip(job, outcome.skip)
                    metrics.job_done(job.database, outcome.action)
                    metrics.file_skipped(job.database, job.source_id, job.uri, outcome.skip)
                    log.info("job done", action=outcome.action, skip_reason=outcome.skip.value)
                else:
                    self.tally.add(job.database, succeeded=1, deleted=int(outcome.action == "deleted"))
                    if written is not None:  # a delete's chunks were removed, not written
                        self.tally.add(
                            job.database, written=1, chunks=outcome.chunks, embedded=outcome.embedded,
                            reused=outcome.reused,
                        )
                    metrics.job_done(
                        job.database, outcome.action, chunks=outcome.chunks, embedded=outcome.embedded,
                        reused=outcome.reused, size=outcome.size,
                    )
                    log.info("job done", action=outcome.action, document_id=outcome.document_id, **outcome.counts)
                self._finished(job, "succeeded")
            else:
                log.warning("job finished after its lease was lost; another claim owns it now")
        finally:
            runtime.job_finished()

    def _disk_full(self, job: Job | None, exc: BaseException) -> None:
        """Stop claiming; leave the job queued (best effort: the queue may be on the full disk too)."""
        if job is not None:
            with contextlib.suppress(Exception):
                self.pipeline.queue.jobs.release(job)
        if self.fatal is None:
            self.fatal = DiskFullError(job.database if job is not None else None)
            self.log.error("no space left on device; stopping", database=self.fatal.database, error=str(exc))
        self.pipeline.wake.set()

    def _engine_lost(self, exc: EngineUnavailableError) -> None:
        delay = self.engine_wait.lost()
        if self.engine_wait.stop:
            if self.fatal is None:
                self.fatal = exc
                self.log.error("the engine is unavailable; stopping", error=str(exc))
        elif delay is not None:
            self.log.error("the engine is unavailable; claiming again later", error=str(exc), retry_in_s=round(delay, 1))
        self.pipeline.wake.set()

    def _failed(self, job: Job, exc: Exception, policy, log) -> None:
        delay = retry_delay(policy, job.attempts, exc)
        message = describe(exc)
        status = self.pipeline.queue.jobs.fail(job, message, retry_delay_s=delay)
        if status != "lost":
            self.pipeline.metrics.job_failed(job.database, status, exc)
        if status == "dead":
            self.tally.add(job.database, dead=1)
            self.tally.dead_jobs.append((job, message))
            log.error("job dead", error=message, attempts=job.attempts)
            self._finished(job, "dead")
        elif status == "queued":
            self.tally.add(job.database, retried=1)
            log.warning("job failed; retrying", error=message, attempts=job.attempts, retry_in_s=round(delay or 0, 2))

    def _finished(self, job: Job, status: str) -> None:
        if self._on_finished is not None:
            self._on_finished(job, status)

    # --- leases ---------------------------------------------------------------------
    async def heartbeat_forever(self) -> None:
        while True:
            await asyncio.sleep(self.settings.heartbeat_interval_s)
            if self._tasks:
                try:
                    self.pipeline.queue.jobs.heartbeat(self.settings.lease_ttl_s)
                except Exception as exc:
                    if not is_disk_full(exc):
                        raise
                    self._disk_full(None, exc)

    async def reap_forever(self) -> None:
        while True:
            await asyncio.sleep(self.settings.reaper_interval_s)
            requeued, dead = self.pipeline.queue.jobs.reap(
                max_attempts=self.settings.retry.max_attempts, databases=serving_names(self.databases)
            )
            if requeued or dead:
                self.log.warning("reaped expired claims", requeued=requeued, dead=dead)
                self.pipeline.wake.set()

    # --- stopping -------------------------------------------------------------------
    async def drain(self, grace_s: float) -> int:
        """Let in-flight jobs finish for up to ``grace_s``; cancel the rest and release their claims.

        Returns how many claims were released.
        """
        self.pipeline.processor.stopping = True  # jobs not yet converting go back at once
        tasks = list(self._tasks.values())
        if tasks:
            self.log.info("waiting for in-flight jobs", jobs=len(tasks), grace_s=grace_s)
            await asyncio.wait(tasks, timeout=grace_s)
        leftover = [t for t in self._tasks.values() if not t.done()]
        claims = list(self._claims.values())
        for task in leftover:
            task.cancel()
        for task in leftover:
            with contextlib.suppress(BaseException):
                await task
        released = 0
        if claims:
            jobs = self.pipeline.queue.jobs
            try:
                released = jobs.release_claims(sorted({j.database for j in claims}), owner=jobs.owner)
            except Exception as exc:
                if not is_disk_full(exc):
                    raise  # on a full disk the claims stay, and the next start requeues them
        return released
