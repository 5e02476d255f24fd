"""Sync state: what the ingester last wrote for each file, and when each source was swept.

A cache of the databases' own document metadata (``source_revision``,
``content_hash``): kept beside the queue so sweeps need not open a database, and
rebuilt from the metadata on start when lost (docs/ingester.md).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass

from haiku.ingester.queue.database import QueueDatabase
from haiku.ingester.skips import SkipTally


@dataclass(frozen=True)
class SyncRecord:
    uri: str
    revision: str | None
    content_hash: str | None
    document_id: str | None
    skipped: str | None = None  # the skip reason a job found at this revision (no document then)
    unreadable: str | None = None  # the pages OCR could not read, a JSON list (``SyncUpdate``)


@dataclass(frozen=True)
class SyncUpdate:
    """What a finished job changes: a new record, or ``delete`` to forget the file.

    A record with ``skipped`` (and no document) remembers a file a job skipped, so
    sweeps count it and do not enqueue it again until its revision changes;
    ``unreadable`` lists the pages of the document that OCR could not read (a JSON
    list of page numbers), so ``status`` names them.
    """

    revision: str | None = None
    content_hash: str | None = None
    document_id: str | None = None
    delete: bool = False
    skipped: str | None = None
    unreadable: str | None = None


def unreadable_json(pages: Iterable[int] | None) -> str | None:
    """The ``unreadable`` of a record: the page numbers as JSON, None when there are none."""
    listed = sorted({int(page) for page in pages or ()})
    return json.dumps(listed) if listed else None


def apply_sync_update(
    conn: sqlite3.Connection, database: str, source_id: str, uri: str, update: SyncUpdate, now: float
) -> None:
    if update.delete:
        conn.execute(
            "DELETE FROM sync_state WHERE database = ? AND source_id = ? AND uri = ?", (database, source_id, uri)
        )
        return
    conn.execute(
        "INSERT INTO sync_state (database, source_id, uri, revision, content_hash, document_id, skipped, "
        "unreadable, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (database, source_id, uri) "
        "DO UPDATE SET revision = excluded.revision, content_hash = excluded.content_hash, "
        "document_id = excluded.document_id, skipped = excluded.skipped, unreadable = excluded.unreadable, "
        "updated_at = excluded.updated_at",
        (
            database, source_id, uri, update.revision, update.content_hash, update.document_id, update.skipped,
            update.unreadable, now,
        ),
    )  # fmt: skip


class SyncState:
    def __init__(self, db: QueueDatabase) -> None:
        self.db = db

    def get(self, database: str, source_id: str, uri: str) -> SyncRecord | None:
        rows = self.db.query(
            "SELECT uri, revision, content_hash, document_id, skipped, unreadable FROM sync_state "
            "WHERE database = ? AND source_id = ? AND uri = ?",
            (database, source_id, uri),
        )
        return SyncRecord(**dict(rows[0])) if rows else None

    def known(self, database: str, source_id: str) -> dict[str, SyncRecord]:
        rows = self.db.query(
            "SELECT uri, revision, content_hash, document_id, skipped, unreadable FROM sync_state "
            "WHERE database = ? AND source_id = ?",
            (database, source_id),
        )
        return {r["uri"]: SyncRecord(**dict(r)) for r in rows}

    def records(self, database: str) -> dict[tuple[str, str], SyncRecord]:
        rows = self.db.query(
            "SELECT source_id, uri, revision, content_hash, document_id, unreadable FROM sync_state "
            "WHERE database = ?",
            (database,),
        )
        return {
            (r["source_id"], r["uri"]): SyncRecord(
                r["uri"], r["revision"], r["content_hash"], r["document_id"], unreadable=r["unreadable"]
            )
            for r in rows
        }

    def put_many(self, database: str, items: Iterable[tuple[str, str, SyncUpdate]]) -> None:
        """``(source_id, uri, update)`` triples in one transaction."""
        now = time.time()
        with self.db.transaction() as conn:
            for source_id, uri, update in items:
                apply_sync_update(conn, database, source_id, uri, update, now)

    def forget_database(self, database: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM sync_state WHERE database = ?", (database,))
            conn.execute("DELETE FROM sweeps WHERE database = ?", (database,))

    def record_sweep(
        self, database: str, source_id: str, *, ok: bool, error: str | None = None, skipped: SkipTally | None = None
    ) -> None:
        """A sweep's outcome; a failed one keeps the skipped files the last good sweep counted."""
        now = time.time()
        counted = json.dumps(skipped.as_json()) if skipped is not None else None
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO sweeps (database, source_id, last_sweep_at, last_status, last_error, skipped) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (database, source_id) DO UPDATE SET "
                "last_sweep_at = excluded.last_sweep_at, last_status = excluded.last_status, "
                "last_error = excluded.last_error, skipped = coalesce(excluded.skipped, sweeps.skipped)",
                (database, source_id, now, "ok" if ok else "failed", error, counted),
            )
