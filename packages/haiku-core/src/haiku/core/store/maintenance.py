"""Vacuum and auto-maintenance (docs/storage.md, "Vacuum" and "Auto-maintenance").

Vacuum, on demand only, per table: compact data files, bring indexes up to
date merged into one, then remove versions older than the retention. It holds
the writer lock throughout. Tagged versions are always kept: LanceDB's own
clean-up refuses to run at all while a tag points at an old version, so the
clean-up step goes through Lance with ``error_if_tagged_old_versions`` off,
which skips tagged versions instead.

Auto-maintenance, in the background after writes and once on close, does
only the cheap, incremental part (``maintenance_steps``), one bounded step at
a time, each under the writer lock on its own: between two steps the lock is
free, so a write waiting for it goes first and waits one step at most.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field
from datetime import timedelta

from haiku.core.logs import get_logger
from haiku.core.store.gate import WriteGate
from haiku.core.store.handles import Handles
from haiku.core.store.indexes import NO_PRUNE, Indexes
from haiku.core.store.maintenance_steps import OLD_VERSIONS, next_step

log = get_logger("haiku.core.store")

AUTO_MAINTENANCE_INTERVAL_S = 300.0
# On close, no step starts after this many seconds; the rest waits for the next run.
CLOSE_MAINTENANCE_BUDGET_S = 15.0
CLOSE_LOCK_TIMEOUT_S = 10.0
# Between two steps the lock stays free this long, so a writer in another process, which polls
# for it every 20 ms, gets it first (one in this process is queued for it and goes first anyway).
STEP_PAUSE_S = 0.05
# A table's steps in one run: more is left to the next run (a guard; a run needs far fewer).
MAX_STEPS_PER_TABLE = 256

_running_lock = threading.Lock()
_running_vacuums: set[str] = set()


@dataclass(frozen=True)
class VacuumReport:
    """What a vacuum removed, over every table."""

    versions_removed: int
    bytes_removed: int
    seconds: float


async def _cleanup(table, retention_seconds: int) -> tuple[int, int]:
    """Remove the table's untagged versions older than the retention: (versions, bytes) removed."""
    dataset = await table.to_lance()
    stats = await asyncio.to_thread(
        dataset.cleanup_old_versions,
        older_than=timedelta(seconds=retention_seconds),
        error_if_tagged_old_versions=False,
    )
    await table.checkout_latest()
    return int(stats.old_versions), int(stats.bytes_removed)


@dataclass(frozen=True)
class MaintenanceReport:
    """What one run of auto-maintenance did, over every table."""

    steps: int
    versions_removed: int
    seconds: float
    longest_step_s: float  # the longest one step held the writer lock: the most a write waited on it
    finished: bool  # False when the run stopped early (on close, or past its budget), leaving work for the next


@dataclass
class _Run:
    """One run of auto-maintenance as it goes."""

    retention_seconds: int
    budget_s: float | None
    started: float = field(default_factory=time.monotonic)
    steps: int = 0
    versions_removed: int = 0
    longest_step_s: float = 0.0
    finished: bool = True  # until it stops early or leaves work

    def past_budget(self) -> bool:
        return self.budget_s is not None and time.monotonic() - self.started >= self.budget_s

    def record(self, kind: str, work: int, held_s: float) -> None:
        self.steps += 1
        self.longest_step_s = max(self.longest_step_s, held_s)
        if kind == OLD_VERSIONS:
            self.versions_removed += work

    def report(self) -> MaintenanceReport:
        seconds = round(time.monotonic() - self.started, 3)
        return MaintenanceReport(self.steps, self.versions_removed, seconds, round(self.longest_step_s, 3),
                                 self.finished)


class Maintenance:
    """Keeps one database tidy: a full vacuum on demand, bounded auto-maintenance after writes and on close."""

    def __init__(self, handles: Handles, gate: WriteGate, indexes: Indexes) -> None:
        self.handles = handles
        self.gate = gate
        self.indexes = indexes
        self.last_auto_run = time.monotonic()
        self.auto_task: asyncio.Task | None = None
        self._closing = False  # set on close: a background run stops after its current step

    def _retention(self, retention_seconds: int | None) -> int:
        if retention_seconds is not None and retention_seconds < 0:
            raise ValueError(f"retention_seconds must be >= 0, got {retention_seconds}")
        return self.handles.config.storage.vacuum_retention_seconds if retention_seconds is None else retention_seconds

    async def vacuum(
        self, retention_seconds: int | None = None, *, lock_timeout_s: float | None = None
    ) -> VacuumReport | None:
        """Compact, optimise indexes and drop versions older than the retention; tagged ones stay.

        Returns what it removed, or ``None`` at once when a vacuum of this
        database is already running in this process.
        """
        self.gate.require_writable("vacuum")
        retention = self._retention(retention_seconds)
        key = self.gate.lock.key
        with _running_lock:
            if key in _running_vacuums:
                log.info("store.vacuum_already_running", database=self.handles.name)
                return None
            _running_vacuums.add(key)
        try:
            started = time.monotonic()
            async with self.gate.writing("vacuum", timeout_s=lock_timeout_s):
                # Indexes merged into one part first: Lance compacts only fragments the same parts cover.
                await self.indexes.refresh_indexes(full=True)
                for table in self.handles.tables.values():
                    await table.optimize(cleanup_older_than=NO_PRUNE)
                await self.indexes.refresh_indexes(full=True)
                versions = removed = 0
                for table in self.handles.tables.values():
                    table_versions, table_bytes = await _cleanup(table, retention)
                    versions, removed = versions + table_versions, removed + table_bytes
                self.handles.pinned_chunks = None
                self.gate.dirty = False
                self.last_auto_run = time.monotonic()
            report = VacuumReport(versions, removed, round(time.monotonic() - started, 3))
            log.info(
                "store.vacuumed",
                database=self.handles.name,
                retention_seconds=retention,
                versions_removed=report.versions_removed,
                bytes_removed=report.bytes_removed,
                seconds=report.seconds,
            )
            return report
        finally:
            with _running_lock:
                _running_vacuums.discard(key)

    async def auto_maintain(
        self, *, budget_s: float | None = None, lock_timeout_s: float | None = None
    ) -> MaintenanceReport:
        """Run the bounded steps every table needs now, the writer lock released between two steps.

        With ``budget_s``, no step starts once that many seconds have passed.
        What a run leaves undone (stopped early, or failed) marks the store as
        written, so the next run, or the one on close, takes it up.
        """
        return await self._run(budget_s, lock_timeout_s, background=False)

    async def _run(self, budget_s: float | None, lock_timeout_s: float | None, *, background: bool) -> MaintenanceReport:
        self.gate.require_writable("auto-maintenance")
        run = _Run(retention_seconds=self._retention(None), budget_s=budget_s)
        self.gate.dirty = False  # a write from now on marks it again
        try:
            for name in list(self.handles.tables):
                if not await self._maintain_table(name, run, lock_timeout_s, background=background):
                    break
            return self._report(run)
        finally:
            if not run.finished:
                self.gate.dirty = True
            self.last_auto_run = time.monotonic()

    async def _maintain_table(
        self, name: str, run: _Run, lock_timeout_s: float | None, *, background: bool
    ) -> bool:
        """The table's steps, one at a time, until it needs none; ``False`` when the run must stop."""
        skip: set[str] = set()
        for _ in range(MAX_STEPS_PER_TABLE):
            if (background and self._closing) or run.past_budget():
                run.finished = False
                return False
            async with self.gate.writing("auto-maintenance", timeout_s=lock_timeout_s):
                began = time.monotonic()
                step = await next_step(name, self.handles.tables[name], run.retention_seconds, skip)
                if step is None:
                    return True
                work = await step.run()
                self.handles.pinned_chunks = None
                held = time.monotonic() - began
            run.record(step.kind, work, held)
            if work == 0:
                skip.add(step.kind)  # nothing of that kind to do now (e.g. every old version is within the retention)
            log.debug("store.maintenance_step", database=self.handles.name, table=name, kind=step.kind, work=work,
                      seconds=round(held, 3))
            await asyncio.sleep(STEP_PAUSE_S)
        run.finished = False  # more than one run's share: the rest is the next run's
        return True

    def _report(self, run: _Run) -> MaintenanceReport:
        report = run.report()
        log.info(
            "store.auto_maintained",
            database=self.handles.name,
            steps=report.steps,
            versions_removed=report.versions_removed,
            seconds=report.seconds,
            longest_step_s=report.longest_step_s,
            finished=report.finished,
        )
        return report

    def after_write(self) -> None:
        """Start a background run of auto-maintenance when one is due (``storage.auto_vacuum``)."""
        if not self.handles.config.storage.auto_vacuum or self.handles.read_only or self._closing:
            return
        if time.monotonic() - self.last_auto_run < AUTO_MAINTENANCE_INTERVAL_S:
            return
        if self.auto_task is not None and not self.auto_task.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self.last_auto_run = time.monotonic()
        self.auto_task = loop.create_task(self._auto(background=True))

    async def before_close(self) -> None:
        """Stop a background run after its current step; run once more, bounded, when written since."""
        self._closing = True
        task, self.auto_task = self.auto_task, None
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)
        config = self.handles.config
        if self.gate.dirty and config.storage.auto_vacuum and not self.handles.read_only:
            timeout = min(config.storage.writer_lock_timeout_s, CLOSE_LOCK_TIMEOUT_S)
            await self._auto(budget_s=CLOSE_MAINTENANCE_BUDGET_S, lock_timeout_s=timeout)

    async def _auto(
        self, budget_s: float | None = None, lock_timeout_s: float | None = None, *, background: bool = False
    ) -> None:
        try:
            await self._run(budget_s, lock_timeout_s, background=background)
        except Exception as exc:  # background upkeep must never fail a write
            error = f"{type(exc).__name__}: {exc}"
            log.warning("store.auto_maintenance_failed", database=self.handles.name, error=error)
