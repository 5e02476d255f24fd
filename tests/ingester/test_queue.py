"""The durable job queue (docs/ingester.md): SQLite WAL, leases, heartbeats, reaper, backoff, dead jobs,
coalescing, retention."""

from __future__ import annotations

import random
import sqlite3
import time

from haiku.core.config import RetryConfig
from haiku.ingester.errors import ConversionError
from haiku.ingester.queue import IngestQueue, SyncUpdate
from haiku.ingester.retry import backoff_delay, retry_delay


def test_queue_file_is_created_in_wal_mode(tmp_path):
    q = IngestQueue(tmp_path / "new" / "ingester.db")
    q.close()
    conn = sqlite3.connect(tmp_path / "new" / "ingester.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_duplicate_enqueue_is_a_no_op(queue):
    assert queue.jobs.enqueue("a", "s", "file:///x.md", "upsert", "1-1") == "inserted"
    assert queue.jobs.enqueue("a", "s", "file:///x.md", "upsert", "1-1") == "unchanged"
    assert queue.jobs.live_count(["a"]) == 1


def test_a_queued_job_takes_the_newer_operation_in_place(queue):
    queue.jobs.enqueue("a", "s", "file:///x.md", "upsert", "1-1")
    assert queue.jobs.enqueue("a", "s", "file:///x.md", "delete") == "coalesced"
    [job] = queue.jobs.claim(["a"], limit=10, lease_ttl_s=30)
    assert (job.op, queue.jobs.live_count(["a"])) == ("delete", 1)


def test_an_event_for_a_claimed_job_is_queued_again_when_the_claim_finishes(queue):
    queue.jobs.enqueue("a", "s", "file:///x.md", "upsert", "1-1")
    [job] = queue.jobs.claim(["a"], limit=1, lease_ttl_s=30)
    assert queue.jobs.enqueue("a", "s", "file:///x.md", "upsert", "2-2") == "followup"
    queue.jobs.complete(job, SyncUpdate("1-1", "h", "doc"))
    [again] = queue.jobs.claim(["a"], limit=1, lease_ttl_s=30)
    assert (again.uri, again.revision) == ("file:///x.md", "2-2")


def test_claims_only_the_databases_asked_for(queue):
    queue.jobs.enqueue("a", "s", "file:///a.md", "upsert", "1")
    queue.jobs.enqueue("b", "t", "file:///b.md", "upsert", "1")
    assert [j.database for j in queue.jobs.claim(["b"], limit=10, lease_ttl_s=30)] == ["b"]


def test_a_job_waiting_for_its_backoff_is_not_claimed(queue):
    queue.jobs.enqueue("a", "s", "file:///x.md", "upsert", "1")
    [job] = queue.jobs.claim(["a"], limit=1, lease_ttl_s=30)
    assert queue.jobs.fail(job, "boom", retry_delay_s=60) == "queued"
    assert queue.jobs.claim(["a"], limit=1, lease_ttl_s=30) == []


def test_completing_a_job_writes_its_sync_state_in_the_same_transaction(queue):
    queue.jobs.enqueue("a", "s", "file:///x.md", "upsert", "1")
    [job] = queue.jobs.claim(["a"], limit=1, lease_ttl_s=30)
    queue.jobs.complete(job, SyncUpdate("1", "sha256:x", "doc-1"))
    assert queue.sync.get("a", "s", "file:///x.md").document_id == "doc-1"


def test_a_permanent_failure_leaves_a_dead_job_with_its_error(queue):
    queue.jobs.enqueue("a", "s", "file:///x.md", "upsert", "1")
    [job] = queue.jobs.claim(["a"], limit=1, lease_ttl_s=30)
    error = ConversionError("x.md: docling could not convert it")
    queue.jobs.fail(job, str(error), retry_delay_s=retry_delay(RetryConfig(), job.attempts, error))
    dead = queue.jobs.get(job.id)
    assert (dead.status, dead.last_error) == ("dead", "x.md: docling could not convert it")


def test_a_transient_failure_goes_dead_after_max_attempts(queue):
    policy = RetryConfig(max_attempts=2, base_delay_s=0, max_delay_s=0, jitter=0)
    queue.jobs.enqueue("a", "s", "file:///x.md", "upsert", "1")
    statuses = []
    for _ in range(2):
        [job] = queue.jobs.claim(["a"], limit=1, lease_ttl_s=30)
        statuses.append(queue.jobs.fail(job, "OSError: busy", retry_delay_s=retry_delay(policy, job.attempts, OSError())))
    assert statuses == ["queued", "dead"]


def test_backoff_doubles_up_to_the_maximum_within_the_jitter():
    policy = RetryConfig(base_delay_s=2, max_delay_s=10, jitter=0.25)
    rng = random.Random(7)
    delays = [[backoff_delay(policy, attempt, rng) for _ in range(200)] for attempt in (1, 2, 3, 4)]
    bounds = [(1.5, 2.5), (3.0, 5.0), (6.0, 10.0), (7.5, 12.5)]
    assert all(lo <= d <= hi for ds, (lo, hi) in zip(delays, bounds, strict=True) for d in ds)


def test_heartbeat_extends_the_leases_of_its_owner(queue):
    queue.jobs.enqueue("a", "s", "file:///x.md", "upsert", "1")
    queue.jobs.claim(["a"], limit=1, lease_ttl_s=0.01)
    assert queue.jobs.heartbeat(60) == 1
    time.sleep(0.05)
    assert queue.jobs.reap(max_attempts=5) == (0, 0)


def test_the_reaper_requeues_an_expired_claim(queue):
    queue.jobs.enqueue("a", "s", "file:///x.md", "upsert", "1")
    queue.jobs.claim(["a"], limit=1, lease_ttl_s=0.01)
    time.sleep(0.05)
    assert queue.jobs.reap(max_attempts=5) == (1, 0)


def test_the_reaper_sends_a_job_out_of_attempts_dead(queue):
    queue.jobs.enqueue("a", "s", "file:///x.md", "upsert", "1")
    [job] = queue.jobs.claim(["a"], limit=1, lease_ttl_s=0.01)
    time.sleep(0.05)
    queue.jobs.reap(max_attempts=1)
    assert "lease expired" in queue.jobs.get(job.id).last_error


def test_a_reaped_claim_cannot_be_completed_by_its_old_holder(queue):
    queue.jobs.enqueue("a", "s", "file:///x.md", "upsert", "1")
    [stale] = queue.jobs.claim(["a"], limit=1, lease_ttl_s=0.01)
    time.sleep(0.05)
    queue.jobs.reap(max_attempts=5)
    queue.jobs.claim(["a"], limit=1, lease_ttl_s=30)
    assert queue.jobs.complete(stale, None) is False


def test_released_claims_are_queued_again_without_spending_an_attempt(queue):
    queue.jobs.enqueue("a", "s", "file:///x.md", "upsert", "1")
    queue.jobs.claim(["a"], limit=1, lease_ttl_s=30)
    queue.jobs.release_claims(["a"], owner="me")
    [job] = queue.jobs.claim(["a"], limit=1, lease_ttl_s=30)
    assert job.attempts == 1


def test_retention_prunes_only_finished_jobs_older_than_the_limit(queue):
    for name in ("old.md", "new.md", "live.md"):
        queue.jobs.enqueue("a", "s", f"file:///{name}", "upsert", "1")
    for job in queue.jobs.claim(["a"], limit=2, lease_ttl_s=30):
        queue.jobs.complete(job, None)
    queue.db.conn.execute("UPDATE jobs SET finished_at = ? WHERE uri = 'file:///old.md'", (time.time() - 3 * 86400,))
    assert queue.jobs.prune(retention_days=1) == 1
    assert [r[0] for r in queue.db.query("SELECT uri FROM jobs ORDER BY id")] == ["file:///new.md", "file:///live.md"]


def test_dead_jobs_since_a_time_are_reported_by_revision(queue):
    started = time.time()
    queue.jobs.enqueue("a", "s", "file:///x.md", "upsert", "5-5")
    [job] = queue.jobs.claim(["a"], limit=1, lease_ttl_s=30)
    queue.jobs.fail(job, "bad", retry_delay_s=None)
    assert queue.jobs.dead_since("a", "s", started) == {("file:///x.md", "5-5")}
