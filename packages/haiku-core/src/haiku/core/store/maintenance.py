"""Vacuum, auto-vacuum, migrations and the info report (docs/storage.md).

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
from dataclasses import dataclass, replace
from datetime import timedelta

from haiku.core.store._base import log
from haiku.core.store.indexes import NO_PRUNE, IndexMixin
from haiku.core.store.migrations import current_schema_version, pending_migrations
from haiku.core.store.reads import ReadsMixin
from haiku.core.store.reports import StoreInfo
from haiku.core.store.schema import TABLES
from haiku.core.store.tags import TagsMixin

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


class MaintenanceMixin(IndexMixin, TagsMixin, ReadsMixin):
    # --- vacuum ---------------------------------------------------------------------
    async def vacuum(
        self, retention_seconds: int | None = None, *, lock_timeout_s: float | None = None
    ) -> VacuumReport | None:
        """Compact, optimise indexes and drop versions older than the retention; tagged ones stay.

        Returns what it removed, or ``None`` at once when a vacuum of this
        database is already running in this process.
        """
        self._require_writable("vacuum")
        if retention_seconds is not None and retention_seconds < 0:
            raise ValueError(f"retention_seconds must be >= 0, got {retention_seconds}")
        retention = (
            self.config.storage.vacuum_retention_seconds if retention_seconds is None else retention_seconds
        )
        key = self._lock.key
        with _running_lock:
            if key in _running_vacuums:
                log.info("store.vacuum_already_running", database=self.name)
                return None
            _running_vacuums.add(key)
        try:
            started = time.monotonic()
            async with self._writing("vacuum", timeout_s=lock_timeout_s):
                # Indexes merged into one part first: Lance compacts only fragments the same parts cover.
                await self._refresh_indexes(full=True)
                for name in TABLES:
                    await self._tables[name].optimize(cleanup_older_than=NO_PRUNE)
                await self._refresh_indexes(full=True)
                versions = removed = 0
                for name in TABLES:
                    table_versions, table_bytes = await _cleanup(self._tables[name], retention)
                    versions, removed = versions + table_versions, removed + table_bytes
                self._pinned_chunks = None
                self._dirty = False
                self._last_auto_vacuum = time.monotonic()
            report = VacuumReport(versions, removed, round(time.monotonic() - started, 3))
            self._last_vacuum_seconds = report.seconds
            log.info(
                "store.vacuumed",
                database=self.name,
                retention_seconds=retention,
                versions_removed=report.versions_removed,
                bytes_removed=report.bytes_removed,
                seconds=report.seconds,
            )
            return report
        finally:
            with _running_lock:
                _running_vacuums.discard(key)

    def _on_written(self) -> None:
        if not self.config.storage.auto_vacuum or self.read_only:
            return
        wait = max(AUTO_VACUUM_INTERVAL_S, AUTO_VACUUM_SPACING * self._last_vacuum_seconds)
        if time.monotonic() - self._last_auto_vacuum < wait:
            return
        if self._vacuum_task is not None and not self._vacuum_task.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._last_auto_vacuum = time.monotonic()
        self._vacuum_task = loop.create_task(self._auto_vacuum())

    async def _auto_vacuum(self, lock_timeout_s: float | None = None) -> None:
        try:
            await self.vacuum(lock_timeout_s=lock_timeout_s)
        except Exception as exc:  # background upkeep must never fail a write
            log.warning("store.auto_vacuum_failed", database=self.name, error=f"{type(exc).__name__}: {exc}")

    # --- migrations -----------------------------------------------------------------
    def pending_migrations(self) -> list[tuple[int, str]]:
        """``(version, description)`` of every step above the recorded version."""
        return [(step.version, step.description) for step in pending_migrations(self.schema_version)]

    async def migrate(self) -> list[str]:
        """Apply pending steps in order; returns ``"version: description"`` per step applied."""
        applied: list[str] = []
        async with self._writing("migrate"):
            settings = await self._read_settings()
            self._settings = settings
            for step in pending_migrations(settings.schema_version):
                log.info("store.migration_applying", database=self.name, version=step.version)
                await step.apply(self)  # type: ignore[arg-type]
                await self._refresh_to_latest()
                current = await self._read_settings()
                await self._write_settings(
                    replace(current, schema_version=max(step.version, current.schema_version))
                )
                applied.append(step.describe())
            self._note_chunk_schema(await self._chunks.schema())
        if applied:
            self._after_write()
        return applied

    # --- info -----------------------------------------------------------------------
    async def info(self) -> StoreInfo:
        """Everything ``haiku-rag info`` reports about this database."""
        self._require_open()
        indexes = await self.index_state()
        tags = await self.list_tags()
        created = self._settings.created_at
        return StoreInfo(
            name=self.name,
            location=str(self.location),
            tag=self.tag,
            read_only=self.read_only,
            schema_version=self.schema_version,
            current_schema_version=current_schema_version(),
            pending_migrations=[{"version": v, "description": d} for v, d in self.pending_migrations()],
            embedder=self.identity.to_dict() if self.identity else None,
            vector_dim=self.vector_dim,
            created_at=created.isoformat() if created is not None else None,
            documents=await self.count_documents(),
            chunks=await self.count_chunks(),
            fts_index=indexes["fts"],
            vector_index=indexes["vector"],
            table_versions={name: await self._tables[name].version() for name in TABLES},
            tags=len(tags),
            rebuild_marker=self.rebuild_marker,
        )
