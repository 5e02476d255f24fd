"""Sweeps: compare a source's listing with its sync state and enqueue the difference."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from haiku.ingester.errors import EmptyListingError, SweepError
from haiku.ingester.queue import IngestQueue, Op, SyncRecord
from haiku.ingester.sources.fs import FileEntry, FolderSource


@dataclass
class SweepPlan:
    upserts: list[tuple[str, str]] = field(default_factory=list)  # (uri, revision)
    deletes: list[str] = field(default_factory=list)
    skipped_dead: int = 0


@dataclass(frozen=True)
class SweepResult:
    database: str
    source_id: str
    listed: int
    enqueued: int
    deletes: int
    skipped_dead: int


def plan_sweep(
    listing: dict[str, FileEntry],
    known: dict[str, SyncRecord],
    dead: set[tuple[str, str | None]],
    *,
    delete_orphans: bool,
) -> SweepPlan:
    plan = SweepPlan()
    for uri, entry in listing.items():
        record = known.get(uri)
        if record is not None and record.revision == entry.revision:
            continue
        if (uri, entry.revision) in dead:
            plan.skipped_dead += 1  # failed at this revision already; wait for a change
            continue
        plan.upserts.append((uri, entry.revision))
    if delete_orphans:
        plan.deletes = [uri for uri in known if uri not in listing]
    return plan


async def sweep_source(source: FolderSource, queue: IngestQueue, *, process_started_at: float) -> SweepResult:
    """One sweep of one source. Raises ``SweepError`` (and records it) when it cannot list."""
    try:
        listing = await asyncio.to_thread(source.list_files)
    except OSError as exc:
        message = f"cannot list source {source.id} of database '{source.database}': {exc.strerror or exc}"
        if exc.filename is None and str(exc):
            message = f"cannot list source {source.id} of database '{source.database}': {exc}"
        queue.sync.record_sweep(source.database, source.id, ok=False, error=message)
        raise SweepError(message, database=source.database, source_id=source.id) from None
    known = queue.sync.known(source.database, source.id)
    dead = queue.jobs.dead_since(source.database, source.id, process_started_at)
    plan = plan_sweep(listing, known, dead, delete_orphans=source.config.delete_orphans)
    if not listing and plan.deletes:
        message = (
            f"source {source.id} of database '{source.database}' lists no files under {source.root}, "
            f"while {len(plan.deletes)} document(s) came from it; deleting nothing (is the folder unmounted?)"
        )
        queue.sync.record_sweep(source.database, source.id, ok=False, error=message)
        raise EmptyListingError(message, database=source.database, source_id=source.id)
    items: list[tuple[str, Op, str | None]] = [(uri, "upsert", rev) for uri, rev in plan.upserts]
    items += [(uri, "delete", None) for uri in plan.deletes]
    counts = queue.jobs.enqueue_many(source.database, source.id, items) if items else {}
    queue.sync.record_sweep(source.database, source.id, ok=True)
    enqueued = sum(counts.get(k, 0) for k in ("inserted", "coalesced", "followup"))  # type: ignore[call-overload]
    return SweepResult(
        database=source.database,
        source_id=source.id,
        listed=len(listing),
        enqueued=enqueued,
        deletes=len(plan.deletes),
        skipped_dead=plan.skipped_dead,
    )
