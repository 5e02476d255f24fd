"""Each database's processing identity as the ingester last saw it, and the re-processing under way.

Kept in the queue file, so ``status`` shows whether a database was processed
with the configured settings without opening it (docs/ingester.md,
"Re-processing"). The ingester notes a database's recorded identity when it
opens it and when ``reprocess`` records a new one.

A re-processing run is noted after its forced jobs are queued and forgotten
after the database recorded the new identity, so a run cut short anywhere is
resumed by running it again: the jobs it left stay queued, and a run noted
with the same target queues nothing new.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from haiku.ingester.queue.database import QueueDatabase


@dataclass(frozen=True)
class NotedProcessing:
    recorded: dict[str, Any] | None  # None: the database records no identity
    documents: int


@dataclass(frozen=True)
class ReprocessingRun:
    target: dict[str, Any]
    documents: int
    started_at: float


class ProcessingNotes:
    def __init__(self, db: QueueDatabase) -> None:
        self.db = db

    def note(self, database: str, recorded: dict[str, Any] | None, documents: int) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO processing (database, recorded, documents, noted_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (database) DO UPDATE SET recorded = excluded.recorded, "
                "documents = excluded.documents, noted_at = excluded.noted_at",
                (database, json.dumps(recorded) if recorded is not None else None, documents, time.time()),
            )

    def run_started(self, database: str, target: dict[str, Any], documents: int) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO reprocessing (database, target, documents, started_at) VALUES (?, ?, ?, ?)",
                (database, json.dumps(target), documents, time.time()),
            )

    def run_of(self, database: str) -> ReprocessingRun | None:
        return read_runs(self.db, [database]).get(database)

    def run_finished(self, database: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM reprocessing WHERE database = ?", (database,))


def _rows(db: QueueDatabase, table: str, databases: list[str]) -> list:
    """The rows of ``table`` for these databases; none in a queue file no ingester of this version opened."""
    if not databases or not db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)):
        return []
    marks = ",".join("?" * len(databases))
    return db.query(f"SELECT * FROM {table} WHERE database IN ({marks})", databases)


def read_noted(db: QueueDatabase, databases: list[str]) -> dict[str, NotedProcessing]:
    """database -> what the ingester last saw it record; absent for one it has not opened."""
    return {
        row["database"]: NotedProcessing(json.loads(row["recorded"]) if row["recorded"] else None, row["documents"])
        for row in _rows(db, "processing", databases)
    }


def read_runs(db: QueueDatabase, databases: list[str]) -> dict[str, ReprocessingRun]:
    """database -> its re-processing under way (started, the new identity not yet recorded)."""
    return {
        row["database"]: ReprocessingRun(json.loads(row["target"]), row["documents"], row["started_at"])
        for row in _rows(db, "reprocessing", databases)
    }
