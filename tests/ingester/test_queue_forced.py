"""Forced upserts in the job queue, and the re-processing notes beside them (docs/ingester.md, "Re-processing")."""

from __future__ import annotations

import sqlite3

from haiku.ingester.queue import IngestQueue, QueueDatabase, SyncUpdate
from haiku.ingester.queue.processing import read_noted

URI = "file:///x.md"


def claim_one(queue):
    [job] = queue.jobs.claim(["a"], limit=1, lease_ttl_s=30)
    return job


def test_a_forced_upsert_is_claimed_as_forced(queue):
    queue.jobs.enqueue_many("a", "s", [(URI, "upsert", "1")], forced=True)
    assert claim_one(queue).forced


def test_an_ordinary_change_coalescing_into_a_forced_job_keeps_it_forced(queue):
    queue.jobs.enqueue_many("a", "s", [(URI, "upsert", "1")], forced=True)
    assert queue.jobs.enqueue("a", "s", URI, "upsert", "2") == "coalesced"
    job = claim_one(queue)
    assert (job.forced, job.revision) == (True, "2")


def test_forcing_a_queued_ordinary_job_makes_it_forced(queue):
    queue.jobs.enqueue("a", "s", URI, "upsert", "1")
    assert queue.jobs.enqueue_many("a", "s", [(URI, "upsert", "1")], forced=True)["coalesced"] == 1
    assert claim_one(queue).forced


def test_forcing_a_claimed_ordinary_job_queues_a_forced_follow_up(queue):
    queue.jobs.enqueue("a", "s", URI, "upsert", "1")
    job = claim_one(queue)
    assert queue.jobs.enqueue_many("a", "s", [(URI, "upsert", "1")], forced=True)["followup"] == 1
    queue.jobs.complete(job, SyncUpdate("1", "h", "doc"))
    assert claim_one(queue).forced


def test_retrying_a_dead_forced_job_keeps_it_forced(queue):
    queue.jobs.enqueue_many("a", "s", [(URI, "upsert", "1")], forced=True)
    assert queue.jobs.fail(claim_one(queue), "boom", retry_delay_s=None) == "dead"
    assert queue.jobs.requeue_dead(queue.jobs.dead_jobs(["a"])) == 1
    assert claim_one(queue).forced


def test_a_queue_file_of_the_previous_schema_gains_the_forced_column(tmp_path):
    path = tmp_path / "old.db"
    IngestQueue(path).close()
    conn = sqlite3.connect(path)  # back to the schema before forced jobs, with a job queued
    conn.executescript(
        "DROP INDEX jobs_ready_by_database; ALTER TABLE sweeps DROP COLUMN skipped; "
        "ALTER TABLE sync_state DROP COLUMN skipped; ALTER TABLE sync_state DROP COLUMN unreadable; "
        "ALTER TABLE jobs DROP COLUMN forced; ALTER TABLE jobs DROP COLUMN followup_forced; "
        "DROP TABLE processing; DROP TABLE reprocessing; PRAGMA user_version = 2; "
        "INSERT INTO jobs (database, source_id, uri, op, status, enqueued_at, updated_at) "
        "VALUES ('a', 's', 'file:///old.md', 'upsert', 'queued', 0, 0);"
    )
    conn.close()
    queue = IngestQueue(path)
    try:
        assert claim_one(queue).forced is False
        queue.processing.note("a", None, 0)
    finally:
        queue.close()


def test_the_noted_processing_identity_reads_back_and_a_run_is_forgotten_when_finished(queue):
    queue.processing.note("a", {"processing.chunk_size": 64}, 3)
    queue.processing.run_started("a", {"processing.chunk_size": 64}, 3)
    assert read_noted(queue.db, ["a"])["a"].recorded == {"processing.chunk_size": 64}
    assert queue.processing.run_of("a").documents == 3
    queue.processing.run_finished("a")
    assert queue.processing.run_of("a") is None


def test_status_reads_a_queue_file_without_the_processing_table(tmp_path):
    path = tmp_path / "old.db"
    sqlite3.connect(path).close()
    db = QueueDatabase(path, read_only=True)
    try:
        assert read_noted(db, ["a"]) == {}
    finally:
        db.close()
