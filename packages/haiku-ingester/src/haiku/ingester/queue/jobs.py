"""Jobs: enqueue with coalescing, claim with a lease, heartbeat, reap, finish (docs/ingester.md).

Life of a job: ``queued → claimed → succeeded | dead``. A claim carries a lease
token; only the holder of the current token can finish the job, so a job the
reaper handed to someone else cannot be finished twice.
"""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Literal

from haiku.ingester.queue.database import QueueDatabase
from haiku.ingester.queue.fairness import pick_ready
from haiku.ingester.queue.sync import SyncUpdate, apply_sync_update
from haiku.ingester.queue.totals import WrittenCounts, add_written

Op = Literal["upsert", "delete"]
EnqueueOutcome = Literal["inserted", "coalesced", "followup", "unchanged"]
LIVE = ("queued", "claimed")
# The WHERE condition of a live job (one still to be done), for every query that needs it.
LIVE_STATUS = "status IN (" + ", ".join(f"'{status}'" for status in LIVE) + ")"


@dataclass(frozen=True)
class Job:
    id: int
    database: str
    source_id: str
    uri: str
    op: Op
    revision: str | None
    status: str
    attempts: int
    lease_token: str | None
    last_error: str | None
    finished_at: float | None = None
    forced: bool = False  # convert even when the file is unchanged (re-processing)

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> Job:
        return cls(
            id=row["id"],
            database=row["database"],
            source_id=row["source_id"],
            uri=row["uri"],
            op=row["op"],
            revision=row["revision"],
            status=row["status"],
            attempts=row["attempts"],
            lease_token=row["lease_token"],
            last_error=row["last_error"],
            finished_at=row["finished_at"],
            forced=bool(row["forced"]),
        )


def _in(values: Collection[object]) -> str:
    return ",".join("?" * len(values))


class JobQueue:
    def __init__(self, db: QueueDatabase, *, owner: str | None = None) -> None:
        self.db = db
        self.owner = owner or f"{uuid.uuid4()}"

    # --- enqueue ------------------------------------------------------------------
    def enqueue(self, database: str, source_id: str, uri: str, op: Op, revision: str | None = None) -> EnqueueOutcome:
        """Add a job unless one is live for the same file.

        A queued job takes the newer op and revision in place; a claimed one
        records it as a follow-up, queued again when the claim finishes.
        """
        now = time.time()
        with self.db.transaction() as conn:
            return self._enqueue(conn, database, source_id, uri, op, revision, now)

    def enqueue_many(
        self, database: str, source_id: str, items: Iterable[tuple[str, Op, str | None]], *, forced: bool = False
    ) -> dict[EnqueueOutcome, int]:
        """``forced``: upserts that convert their file even when it is unchanged (re-processing)."""
        counts: dict[EnqueueOutcome, int] = {"inserted": 0, "coalesced": 0, "followup": 0, "unchanged": 0}
        now = time.time()
        with self.db.transaction() as conn:
            for uri, op, revision in items:
                counts[self._enqueue(conn, database, source_id, uri, op, revision, now, forced)] += 1
        return counts

    @staticmethod
    def _enqueue(
        conn: sqlite3.Connection,
        database: str,
        source_id: str,
        uri: str,
        op: Op,
        revision: str | None,
        now: float,
        forced: bool = False,
    ) -> EnqueueOutcome:
        """A forced job stays forced when an ordinary change coalesces into it."""
        row = conn.execute(
            "SELECT id, status, op, revision, forced, followup_op, followup_revision, followup_forced FROM jobs "
            f"WHERE database = ? AND source_id = ? AND uri = ? AND {LIVE_STATUS}",
            (database, source_id, uri),
        ).fetchone()
        if row is None:
            conn.execute(
                "INSERT INTO jobs (database, source_id, uri, op, revision, forced, status, enqueued_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?)",
                (database, source_id, uri, op, revision, int(forced), now, now),
            )
            return "inserted"
        if row["status"] == "queued":
            if (row["op"], row["revision"]) == (op, revision) and (row["forced"] or not forced):
                return "unchanged"
            conn.execute(
                "UPDATE jobs SET op = ?, revision = ?, forced = MAX(forced, ?), updated_at = ? WHERE id = ?",
                (op, revision, int(forced), now, row["id"]),
            )
            return "coalesced"
        same = (row["op"], row["revision"]) == (op, revision) and (row["forced"] or not forced)
        if same and row["followup_op"] is None:
            return "unchanged"
        same_followup = (row["followup_op"], row["followup_revision"]) == (op, revision)
        if same_followup and (row["followup_forced"] or not forced):
            return "unchanged"
        conn.execute(
            "UPDATE jobs SET followup_op = ?, followup_revision = ?, followup_forced = MAX(followup_forced, ?), "
            "updated_at = ? WHERE id = ?",
            (op, revision, int(forced), now, row["id"]),
        )
        return "followup"

    # --- claim and lease ----------------------------------------------------------
    def claim(self, databases: Collection[str], *, limit: int, lease_ttl_s: float) -> list[Job]:
        """Claim up to ``limit`` ready jobs of these databases: oldest first within each, the databases
        interleaved by how many claims each holds (``fairness``), returned in that order."""
        if not databases or limit <= 0:
            return []
        now = time.time()
        token = uuid.uuid4().hex
        with self.db.transaction() as conn:
            ids = pick_ready(conn, databases, now=now, limit=limit)
            if not ids:
                return []
            rows = conn.execute(
                f"""
                UPDATE jobs SET status = 'claimed', attempts = attempts + 1,
                    lease_token = ? || ':' || id, lease_owner = ?, lease_expires = ?, updated_at = ?
                WHERE id IN ({_in(ids)})
                RETURNING *
                """,
                (token, self.owner, now + lease_ttl_s, now, *ids),
            ).fetchall()
        # In the order picked: workers start them so, and the databases interleave in the converters' queue too.
        position = {job_id: i for i, job_id in enumerate(ids)}
        return sorted((Job.from_row(r) for r in rows), key=lambda j: position[j.id])

    def heartbeat(self, lease_ttl_s: float) -> int:
        """Renew every lease this owner holds."""
        now = time.time()
        with self.db.transaction() as conn:
            cur = conn.execute(
                "UPDATE jobs SET lease_expires = ?, updated_at = ? WHERE status = 'claimed' AND lease_owner = ?",
                (now + lease_ttl_s, now, self.owner),
            )
            return cur.rowcount

    def reap(self, *, max_attempts: int, databases: Collection[str] | None = None) -> tuple[int, int]:
        """Requeue claims whose lease expired; those out of attempts go dead.

        Returns ``(requeued, dead)``.
        """
        now = time.time()
        where = "status = 'claimed' AND lease_expires < ?"
        params: list = [now]
        if databases is not None:
            if not databases:
                return (0, 0)
            where += f" AND database IN ({_in(databases)})"
            params.extend(databases)
        with self.db.transaction() as conn:
            dead = conn.execute(
                f"UPDATE jobs SET status = 'dead', finished_at = ?, updated_at = ?, lease_token = NULL, "
                f"last_error = 'the lease expired ' || attempts || ' times: the job never finished' "
                f"WHERE {where} AND attempts >= ?",
                (now, now, *params, max_attempts),
            ).rowcount
            requeued = conn.execute(
                f"UPDATE jobs SET status = 'queued', lease_token = NULL, lease_owner = NULL, "
                f"lease_expires = NULL, updated_at = ? WHERE {where}",
                (now, *params),
            ).rowcount
        return requeued, dead

    def release_claims(self, databases: Collection[str], *, owner: str | None = None, count_attempt: bool = False) -> int:
        """Put claimed jobs back in the queue (shutdown, or claims of a dead process).

        A released claim does not count as an attempt unless ``count_attempt``.
        """
        if not databases:
            return 0
        now = time.time()
        where = f"status = 'claimed' AND database IN ({_in(databases)})"
        params: list = [*databases]
        if owner is not None:
            where += " AND lease_owner = ?"
            params.append(owner)
        decrement = "" if count_attempt else ", attempts = MAX(attempts - 1, 0)"
        with self.db.transaction() as conn:
            return conn.execute(
                f"UPDATE jobs SET status = 'queued', lease_token = NULL, lease_owner = NULL, "
                f"lease_expires = NULL, updated_at = ?{decrement} WHERE {where}",
                (now, *params),
            ).rowcount

    def release(self, job: Job) -> bool:
        """Give one claim back untouched (its database is going away)."""
        now = time.time()
        with self.db.transaction() as conn:
            return (
                conn.execute(
                    "UPDATE jobs SET status = 'queued', attempts = MAX(attempts - 1, 0), lease_token = NULL, "
                    "lease_owner = NULL, lease_expires = NULL, updated_at = ? "
                    "WHERE id = ? AND status = 'claimed' AND lease_token = ?",
                    (now, job.id, job.lease_token),
                ).rowcount
                > 0
            )

    # --- finishing --------------------------------------------------------------
    def complete(self, job: Job, sync: SyncUpdate | None = None, written: WrittenCounts | None = None) -> bool:
        """Mark a claimed job succeeded and apply its sync-state change, atomically.

        ``written`` (a document was written) adds to the database's write totals
        in the same transaction. False when the claim was lost (reaped and
        handed on): nothing changes.
        """
        now = time.time()
        with self.db.transaction() as conn:
            row = self._owned(conn, job)
            if row is None:
                return False
            if sync is not None:
                apply_sync_update(conn, job.database, job.source_id, job.uri, sync, now)
            if written is not None:
                add_written(conn, job.database, written)
            conn.execute(
                "UPDATE jobs SET status = 'succeeded', finished_at = ?, updated_at = ?, lease_token = NULL, "
                "lease_owner = NULL, lease_expires = NULL, last_error = NULL WHERE id = ?",
                (now, now, job.id),
            )
            self._queue_followup(conn, row, now)
        return True

    def fail(self, job: Job, error: str, *, retry_delay_s: float | None) -> Literal["queued", "dead", "lost"]:
        """Record a failure: requeue after ``retry_delay_s``, or dead when it is None."""
        now = time.time()
        with self.db.transaction() as conn:
            row = self._owned(conn, job)
            if row is None:
                return "lost"
            if retry_delay_s is None:
                conn.execute(
                    "UPDATE jobs SET status = 'dead', finished_at = ?, updated_at = ?, last_error = ?, "
                    "lease_token = NULL, lease_owner = NULL, lease_expires = NULL WHERE id = ?",
                    (now, now, error, job.id),
                )
                self._queue_followup(conn, row, now)
                return "dead"
            conn.execute(
                "UPDATE jobs SET status = 'queued', not_before = ?, updated_at = ?, last_error = ?, "
                "lease_token = NULL, lease_owner = NULL, lease_expires = NULL WHERE id = ?",
                (now + retry_delay_s, now, error, job.id),
            )
            return "queued"

    @staticmethod
    def _owned(conn: sqlite3.Connection, job: Job) -> sqlite3.Row | None:
        return conn.execute(
            "SELECT * FROM jobs WHERE id = ? AND status = 'claimed' AND lease_token = ?", (job.id, job.lease_token)
        ).fetchone()

    @staticmethod
    def _queue_followup(conn: sqlite3.Connection, row: sqlite3.Row, now: float) -> None:
        if row["followup_op"] is None:
            return
        conn.execute(
            "INSERT INTO jobs (database, source_id, uri, op, revision, forced, status, enqueued_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?)",
            (
                row["database"], row["source_id"], row["uri"], row["followup_op"], row["followup_revision"],
                row["followup_forced"], now, now,
            ),
        )

    # --- housekeeping and questions ------------------------------------------------
    def live_count(self, databases: Collection[str], source_id: str | None = None) -> int:
        if not databases:
            return 0
        sql = f"SELECT COUNT(*) FROM jobs WHERE {LIVE_STATUS} AND database IN ({_in(databases)})"
        params: list = [*databases]
        if source_id is not None:
            sql += " AND source_id = ?"
            params.append(source_id)
        return self.db.query(sql, params)[0][0]

    def next_ready_at(self, databases: Collection[str]) -> float | None:
        """When the earliest queued job of these databases becomes claimable."""
        if not databases:
            return None
        row = self.db.query(
            f"SELECT MIN(not_before) FROM jobs WHERE status = 'queued' AND database IN ({_in(databases)})",
            [*databases],
        )[0]
        return row[0]

    def dead_jobs(self, databases: Collection[str]) -> list[Job]:
        """The latest job of every file whose latest job is dead, the most recent first."""
        if not databases:
            return []
        rows = self.db.query(
            f"""SELECT j.* FROM jobs j
            WHERE j.status = 'dead' AND j.database IN ({_in(databases)}) AND NOT EXISTS (
                SELECT 1 FROM jobs k WHERE k.database = j.database AND k.source_id = j.source_id
                AND k.uri = j.uri AND k.id > j.id)
            ORDER BY j.finished_at DESC, j.id DESC""",
            [*databases],
        )
        return [Job.from_row(r) for r in rows]

    def dead_files(self, databases: Collection[str]) -> dict[tuple[str, str, str], str | None]:
        """``(database, source_id, uri) -> revision`` of every file whose latest job is dead."""
        return {(j.database, j.source_id, j.uri): j.revision for j in self.dead_jobs(databases)}

    def requeue_dead(self, jobs: Iterable[Job]) -> int:
        """Queue each dead job's file again (a new job, same op and revision), attempts from zero.

        A file with a live job already is left to it. Returns how many jobs were queued.
        """
        now = time.time()
        queued = 0
        with self.db.transaction() as conn:
            for job in jobs:
                outcome = self._enqueue(
                    conn, job.database, job.source_id, job.uri, job.op, job.revision, now, job.forced
                )
                queued += outcome == "inserted"
        return queued

    def dead_since(self, database: str, source_id: str, since: float) -> set[tuple[str, str | None]]:
        """``(uri, revision)`` of upserts that went dead since ``since`` (this process's start)."""
        rows = self.db.query(
            "SELECT uri, revision FROM jobs WHERE status = 'dead' AND op = 'upsert' AND database = ? "
            "AND source_id = ? AND finished_at >= ?",
            (database, source_id, since),
        )
        return {(r["uri"], r["revision"]) for r in rows}

    def delete_live_jobs(self, database: str, *, keep_sources: Collection[str] | None = None) -> int:
        """Drop queued/claimed jobs of a database (removed on reload), or of its sources not kept."""
        sql = f"DELETE FROM jobs WHERE {LIVE_STATUS} AND database = ?"
        params: list = [database]
        if keep_sources is not None:
            if keep_sources:
                sql += f" AND source_id NOT IN ({_in(keep_sources)})"
                params.extend(keep_sources)
        with self.db.transaction() as conn:
            return conn.execute(sql, params).rowcount

    def delete_live_jobs_of_unconfigured(self, configured: Collection[tuple[str, str]]) -> int:
        """Drop queued/claimed jobs whose (database, source id) is no longer configured."""
        rows = self.db.query(f"SELECT DISTINCT database, source_id FROM jobs WHERE {LIVE_STATUS}")
        stale = [(r["database"], r["source_id"]) for r in rows if (r["database"], r["source_id"]) not in configured]
        removed = 0
        with self.db.transaction() as conn:
            for database, source_id in stale:
                removed += conn.execute(
                    f"DELETE FROM jobs WHERE {LIVE_STATUS} AND database = ? AND source_id = ?",
                    (database, source_id),
                ).rowcount
        return removed

    def prune(self, retention_days: float | None) -> int:
        """Delete terminal jobs finished more than ``retention_days`` ago (None keeps all)."""
        if retention_days is None:
            return 0
        cutoff = time.time() - retention_days * 86400
        with self.db.transaction() as conn:
            return conn.execute(
                "DELETE FROM jobs WHERE status IN ('succeeded', 'dead') AND finished_at < ?", (cutoff,)
            ).rowcount

    def get(self, job_id: int) -> Job | None:
        rows = self.db.query("SELECT * FROM jobs WHERE id = ?", (job_id,))
        return Job.from_row(rows[0]) if rows else None
