"""The queue's SQLite file: opened in WAL mode, created and migrated automatically."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from haiku.ingester.errors import QueueError

# Ordered schema steps; the file records how many have been applied.
_MIGRATIONS: list[str] = [
    """
    CREATE TABLE jobs (
        id INTEGER PRIMARY KEY,
        database TEXT NOT NULL,
        source_id TEXT NOT NULL,
        uri TEXT NOT NULL,
        op TEXT NOT NULL CHECK (op IN ('upsert', 'delete')),
        revision TEXT,
        status TEXT NOT NULL CHECK (status IN ('queued', 'claimed', 'succeeded', 'dead')),
        attempts INTEGER NOT NULL DEFAULT 0,
        not_before REAL NOT NULL DEFAULT 0,
        lease_token TEXT,
        lease_owner TEXT,
        lease_expires REAL,
        last_error TEXT,
        followup_op TEXT,
        followup_revision TEXT,
        enqueued_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        finished_at REAL
    );
    -- At most one live job per (database, source, uri): duplicates coalesce.
    CREATE UNIQUE INDEX jobs_live ON jobs (database, source_id, uri)
        WHERE status IN ('queued', 'claimed');
    CREATE INDEX jobs_ready ON jobs (status, not_before, id);
    CREATE INDEX jobs_finished ON jobs (status, finished_at);
    CREATE TABLE sync_state (
        database TEXT NOT NULL,
        source_id TEXT NOT NULL,
        uri TEXT NOT NULL,
        revision TEXT,
        content_hash TEXT,
        document_id TEXT,
        updated_at REAL NOT NULL,
        PRIMARY KEY (database, source_id, uri)
    );
    CREATE TABLE sweeps (
        database TEXT NOT NULL,
        source_id TEXT NOT NULL,
        last_sweep_at REAL,
        last_status TEXT,
        last_error TEXT,
        PRIMARY KEY (database, source_id)
    );
    """,
    """
    CREATE TABLE write_totals (
        database TEXT PRIMARY KEY,
        since REAL NOT NULL,
        documents INTEGER NOT NULL DEFAULT 0,
        chunks INTEGER NOT NULL DEFAULT 0,
        embedded INTEGER NOT NULL DEFAULT 0,
        reused INTEGER NOT NULL DEFAULT 0
    );
    """,
    """
    -- A forced upsert converts its file even when unchanged (re-processing, docs/ingester.md).
    ALTER TABLE jobs ADD COLUMN forced INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE jobs ADD COLUMN followup_forced INTEGER NOT NULL DEFAULT 0;
    -- The processing identity each database recorded, as the ingester last saw it (for `status`),
    -- and the re-processing under way per database.
    CREATE TABLE processing (
        database TEXT PRIMARY KEY,
        recorded TEXT,
        documents INTEGER NOT NULL DEFAULT 0,
        noted_at REAL NOT NULL
    );
    CREATE TABLE reprocessing (
        database TEXT PRIMARY KEY,
        target TEXT NOT NULL,
        documents INTEGER NOT NULL,
        started_at REAL NOT NULL
    );
    """,
    """
    -- Files skipped rather than ingested (docs/ingester.md, "Skipped files"): each sweep's count per
    -- source by reason, and the reason a job skipped a file at the revision it read.
    ALTER TABLE sweeps ADD COLUMN skipped TEXT;
    ALTER TABLE sync_state ADD COLUMN skipped TEXT;
    -- A claim reads each database's oldest ready jobs (queue.fairness).
    CREATE INDEX jobs_ready_by_database ON jobs (database, status, not_before, id);
    """,
    """
    -- The pages OCR could not read in the file as last converted (docs/ingester.md, "Scanned pages
    -- (OCR)"): a JSON list of page numbers, for `status`.
    ALTER TABLE sync_state ADD COLUMN unreadable TEXT;
    """,
]


class QueueDatabase:
    """One connection to the queue file, shared by the event loop's callers.

    SQLite calls are short (indexed single-row updates), so they run inline; a
    lock keeps the rare call from another thread from interleaving a transaction.
    """

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = Path(path)
        self.read_only = read_only
        self._lock = threading.RLock()
        try:
            if read_only:
                uri = f"file:{self.path.resolve()}?mode=ro"
                self.conn = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self.conn.row_factory = sqlite3.Row
            self.conn.execute("PRAGMA busy_timeout = 10000")
            if not read_only:
                self.conn.execute("PRAGMA journal_mode = WAL")
                # NORMAL in WAL mode loses nothing on a process crash (kill -9);
                # only a power cut can drop the last commits, which sweeps re-find.
                self.conn.execute("PRAGMA synchronous = NORMAL")
                self._migrate()
        except sqlite3.Error as exc:
            raise QueueError(f"cannot open the job queue at {self.path}: {exc}") from None

    def _migrate(self) -> None:
        with self.transaction() as conn:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > len(_MIGRATIONS):
                raise QueueError(
                    f"the job queue at {self.path} was written by a newer haiku-ingester "
                    f"(schema {version}, this one knows {len(_MIGRATIONS)})"
                )
            for step in _MIGRATIONS[version:]:
                for statement in step.split(";"):
                    if statement.strip():
                        conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {len(_MIGRATIONS)}")

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE … COMMIT, rolled back on any error."""
        with self._lock:
            try:
                self.conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise QueueError(f"the job queue at {self.path} is unavailable: {exc}") from None
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            else:
                self.conn.execute("COMMIT")

    def query(self, sql: str, params: tuple | list = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self.conn.execute(sql, params).fetchall()

    def close(self) -> None:
        with self._lock:
            self.conn.close()
