"""Vacuum and auto-vacuum (docs/storage.md, "Vacuum" and "Auto-vacuum").

Vacuum, per table: compact data files, bring indexes up to date, then remove
versions older than the retention. Tagged versions are always kept: LanceDB's
own clean-up refuses to run at all while a tag points at an old version, so
the clean-up step goes through Lance with ``error_if_tagged_old_versions``
off, which skips tagged versions instead.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass
from datetime import timedelta

from haiku.core.logs import get_logger
from haiku.core.store.gate import WriteGate
from haiku.core.store.handles import Handles
from haiku.core.store.indexes import NO_PRUNE, Indexes

log = get_logger("haiku.core.store")

AUTO_VACUUM_INTERVAL_S = 300.0
# A vacuum holds the writer lock while it runs (about two minutes at a million chunks, where it
# rewrites the data and merges the indexes), so the next background vacuum waits at least this
# many times as long: writes then wait on vacuums a twentieth of the time at most, at any size.
AUTO_VACUUM_SPACING = 20
CLOSE_VACUUM_LOCK_TIMEOUT_S = 10.0

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


class Maintenance:
    """Vacuums one database: on demand, in the background after writes, and once on close."""

    def __init__(self, handles: Handles, gate: WriteGate, indexes: Indexes) -> None:
        self.handles = handles
        self.gate = gate
        self.indexes = indexes
        self.last_auto_vacuum = time.monotonic()
        self.last_vacuum_seconds = 0.0  # how long this store's last vacuum took
        self.vacuum_task: asyncio.Task | None = None

    async def vacuum(
        self, retention_seconds: int | None = None, *, lock_timeout_s: float | None = None
    ) -> VacuumReport | None:
        """Compact, optimise indexes and drop versions older than the retention; tagged ones stay.

        Returns what it removed, or ``None`` at once when a vacuum of this
        database is already running in this process.
        """
        self.gate.require_writable("vacuum")
        if retention_seconds is not None and retention_seconds < 0:
            raise ValueError(f"retention_seconds must be >= 0, got {retention_seconds}")
        retention = (
            self.handles.config.storage.vacuum_retention_seconds if retention_seconds is None else retention_seconds
        )
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
                self.last_auto_vacuum = time.monotonic()
            report = VacuumReport(versions, removed, round(time.monotonic() - started, 3))
            self.last_vacuum_seconds = report.seconds
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

    def after_write(self) -> None:
        """Start a background vacuum when one is due (``storage.auto_vacuum``)."""
        if not self.handles.config.storage.auto_vacuum or self.handles.read_only:
            return
        wait = max(AUTO_VACUUM_INTERVAL_S, AUTO_VACUUM_SPACING * self.last_vacuum_seconds)
        if time.monotonic() - self.last_auto_vacuum < wait:
            return
        if self.vacuum_task is not None and not self.vacuum_task.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self.last_auto_vacuum = time.monotonic()
        self.vacuum_task = loop.create_task(self._auto_vacuum())

    async def before_close(self) -> None:
        """Wait for a background vacuum; vacuum once more when written since the last one."""
        task, self.vacuum_task = self.vacuum_task, None
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)
        config = self.handles.config
        if self.gate.dirty and config.storage.auto_vacuum and not self.handles.read_only:
            timeout = min(config.storage.writer_lock_timeout_s, CLOSE_VACUUM_LOCK_TIMEOUT_S)
            await self._auto_vacuum(lock_timeout_s=timeout)

    async def _auto_vacuum(self, lock_timeout_s: float | None = None) -> None:
        try:
            await self.vacuum(lock_timeout_s=lock_timeout_s)
        except Exception as exc:  # background upkeep must never fail a write
            error = f"{type(exc).__name__}: {exc}"
            log.warning("store.auto_vacuum_failed", database=self.handles.name, error=error)
