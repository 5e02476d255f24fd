"""The durable job queue and sync state: one SQLite file per ingester process."""

from __future__ import annotations

from pathlib import Path

from haiku.ingester.queue.database import QueueDatabase
from haiku.ingester.queue.jobs import Job, JobQueue, Op
from haiku.ingester.queue.processing import ProcessingNotes
from haiku.ingester.queue.sync import SyncRecord, SyncState, SyncUpdate, unreadable_json
from haiku.ingester.queue.totals import WriteTotals, WrittenCounts

__all__ = [
    "IngestQueue",
    "Job",
    "JobQueue",
    "Op",
    "ProcessingNotes",
    "QueueDatabase",
    "SyncRecord",
    "SyncState",
    "SyncUpdate",
    "WriteTotals",
    "WrittenCounts",
    "unreadable_json",
]


class IngestQueue:
    """The queue file with its faces: jobs, sync state, the totals of what was written, processing notes."""

    def __init__(self, path: Path, *, owner: str | None = None) -> None:
        self.db = QueueDatabase(path)
        self.jobs = JobQueue(self.db, owner=owner)
        self.sync = SyncState(self.db)
        self.totals = WriteTotals(self.db)
        self.processing = ProcessingNotes(self.db)

    @property
    def path(self) -> Path:
        return self.db.path

    def close(self) -> None:
        self.db.close()
