"""What the ingester wrote per database since it started: documents, chunks, embedded, reused.

Kept in the queue file, so ``status`` reads them without opening a database.
Each ingester start (``serve``, ``run-batch``, a database added by a reload)
sets its databases' totals back to zero; each written document adds to them in
the transaction that acknowledges its job, so they count what is durably written.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from haiku.ingester.queue.database import QueueDatabase

COUNTS = ("documents", "chunks", "embedded", "reused")


@dataclass(frozen=True)
class WrittenCounts:
    """One written document: its chunks, how many were embedded, how many kept their stored vector."""

    chunks: int
    embedded: int
    reused: int


def add_written(conn: sqlite3.Connection, database: str, counts: WrittenCounts) -> None:
    conn.execute(
        "UPDATE write_totals SET documents = documents + 1, chunks = chunks + ?, embedded = embedded + ?, "
        "reused = reused + ? WHERE database = ?",
        (counts.chunks, counts.embedded, counts.reused, database),
    )


class WriteTotals:
    def __init__(self, db: QueueDatabase) -> None:
        self.db = db

    def start(self, databases: Iterable[str]) -> None:
        """Zero the totals of these databases: counting starts now."""
        now = time.time()
        with self.db.transaction() as conn:
            for database in databases:
                conn.execute(
                    "INSERT INTO write_totals (database, since) VALUES (?, ?) ON CONFLICT (database) DO UPDATE SET "
                    "since = excluded.since, documents = 0, chunks = 0, embedded = 0, reused = 0",
                    (database, now),
                )


def read_totals(db: QueueDatabase, databases: list[str]) -> dict[str, dict[str, Any]]:
    """database -> {since (epoch seconds), documents, chunks, embedded, reused}; none before any start."""
    if not databases or not db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'write_totals'"):
        return {}  # a queue file no ingester of this version has opened yet
    marks = ",".join("?" * len(databases))
    rows = db.query(f"SELECT * FROM write_totals WHERE database IN ({marks})", databases)
    return {row["database"]: {"since": row["since"], **{key: row[key] for key in COUNTS}} for row in rows}
