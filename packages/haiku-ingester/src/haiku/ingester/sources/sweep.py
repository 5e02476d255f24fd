"""Sweeps: compare a source's listing with its sync state and enqueue the difference."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field

from haiku.ingester.errors import EmptyListingError, SweepError
from haiku.ingester.queue import IngestQueue, Op, SyncRecord
from haiku.ingester.skips import SkipReason, SkipTally
from haiku.ingester.sources.fs import FileEntry, FolderSource


@dataclass
class SweepPlan:
    upserts: list[tuple[str, str]] = field(default_factory=list)  # (uri, revision)
    deletes: list[str] = field(default_factory=list)
    new: set[str] = field(default_factory=set)  # upserted uris with no record yet: additions
    skipped_dead: int = 0
    skipped: SkipTally = field(default_factory=SkipTally)  # known files a job skipped, still unchanged

    @property
    def added(self) -> int:
        return len(self.new)

    @property
    def updated(self) -> int:
        return len(self.upserts) - len(self.new)


@dataclass(frozen=True)
class SweepResult:
    database: str
    source_id: str
    listed: int
    enqueued: int
    deletes: int
    skipped_dead: int
    added: int = 0
    updated: int = 0
    skipped: SkipTally = field(default_factory=SkipTally)  # files not taken, by reason


def plan_sweep(
    listing: Mapping[str, FileEntry],
    known: Mapping[str, SyncRecord],
    dead: set[tuple[str, str | None]],
    *,
    delete_orphans: bool,
) -> SweepPlan:
    plan = SweepPlan()
    for uri, entry in listing.items():
        record = known.get(uri)
        if record is not None and record.revision == entry.revision:
            if record.skipped is not None:  # a job skipped it at this revision (not text)
                plan.skipped.add(SkipReason(record.skipped), entry.path.name)
            continue
        if (uri, entry.revision) in dead:
            plan.skipped_dead += 1  # failed at this revision already; wait for a change
            continue
        plan.upserts.append((uri, entry.revision))
        if record is None:
            plan.new.add(uri)
    if delete_orphans:
        plan.deletes = [uri for uri in known if uri not in listing]
    return plan


async def list_source(source: FolderSource) -> tuple[dict[str, FileEntry], SkipTally]:
    """The source's listing and the files it skipped; ``SweepError`` naming the source and its root when it
    cannot be listed."""
    skipped = SkipTally()
    try:
        return await asyncio.to_thread(source.list_files, skipped), skipped
    except OSError as exc:
        reason = str(exc) if exc.filename is None and str(exc) else f"the root {source.root}: {exc.strerror or exc}"
        raise SweepError(f"{source.label()}: {reason}", database=source.database, source_id=source.id) from None


def check_listing(source: FolderSource, listing: Mapping[str, FileEntry], plan: SweepPlan) -> None:
    """An empty listing that would delete every document of the source is refused, unless ``allow_empty``."""
    if not listing and plan.deletes and not source.config.allow_empty:
        raise EmptyListingError(
            f"{source.label()}: the root {source.root} lists no files, while {len(plan.deletes)} document(s) "
            "came from it; deleting nothing (is the folder unmounted? If it was emptied on purpose, set "
            "allow_empty: true on the source)",
            database=source.database,
            source_id=source.id,
        )


async def dead_now_skipped(source: FolderSource, queue: IngestQueue, listing: Mapping[str, FileEntry]) -> list[str]:
    """Files whose latest job is dead and that are skipped now (an empty file an older release
    dead-lettered, a dead file since emptied): a delete job each ends their dead entry, as no
    upsert will come for them (docs/ingester.md, "Skipped files")."""
    if not isinstance(source, FolderSource):
        return []
    dead = [
        uri for (_, source_id, uri) in queue.jobs.dead_files([source.database])
        if source_id == source.id and uri not in listing
    ]
    if not dead:
        return []

    def skipped() -> list[str]:
        return [uri for uri in dead if source.skip_of(source.path_for(uri)) is not None]

    return await asyncio.to_thread(skipped)


async def sweep_source(source: FolderSource, queue: IngestQueue, *, process_started_at: float) -> SweepResult:
    """One sweep of one source. Raises ``SweepError`` (and records it) when it cannot list."""
    try:
        listing, skipped = await list_source(source)
        known = queue.sync.known(source.database, source.id)
        dead = queue.jobs.dead_since(source.database, source.id, process_started_at)
        plan = plan_sweep(listing, known, dead, delete_orphans=source.config.delete_orphans)
        check_listing(source, listing, plan)
    except SweepError as exc:
        queue.sync.record_sweep(source.database, source.id, ok=False, error=str(exc))
        raise
    items: list[tuple[str, Op, str | None]] = [(uri, "upsert", rev) for uri, rev in plan.upserts]
    items += [(uri, "delete", None) for uri in plan.deletes]
    items += [(uri, "delete", None) for uri in await dead_now_skipped(source, queue, listing)]
    counts = queue.jobs.enqueue_many(source.database, source.id, items) if items else {}
    # What the listing skipped is recorded; the files jobs skipped have their own sync records (status adds them).
    queue.sync.record_sweep(source.database, source.id, ok=True, skipped=skipped)
    skipped = SkipTally.combined([skipped, plan.skipped])
    enqueued = sum(counts.get(k, 0) for k in ("inserted", "coalesced", "followup"))  # type: ignore[call-overload]
    return SweepResult(
        database=source.database,
        source_id=source.id,
        listed=len(listing),
        enqueued=enqueued,
        deletes=len(plan.deletes),
        skipped_dead=plan.skipped_dead,
        added=plan.added,
        updated=plan.updated,
        skipped=skipped,
    )
