"""A claim interleaves databases instead of draining one before the other (docs/ingester.md, "Queue and workers")."""

from __future__ import annotations


def _fill(queue, database: str, n: int) -> None:
    queue.jobs.enqueue_many(database, "s", [(f"file:///{database}/{i}.pdf", "upsert", "r1") for i in range(n)])


def test_one_claim_takes_jobs_of_every_database_in_turn(queue):
    _fill(queue, "pdfs", 10)  # queued first: the long files
    _fill(queue, "notes", 10)  # then another database's small files
    jobs = queue.jobs.claim(["pdfs", "notes"], limit=4, lease_ttl_s=30)
    assert [j.database for j in jobs] == ["pdfs", "notes", "pdfs", "notes"]  # the order the workers start them


def test_a_later_claim_goes_to_the_database_holding_fewer_claims(queue):
    _fill(queue, "pdfs", 10)
    queue.jobs.claim(["pdfs"], limit=3, lease_ttl_s=30)  # the PDFs hold three workers already
    _fill(queue, "notes", 10)
    jobs = queue.jobs.claim(["pdfs", "notes"], limit=3, lease_ttl_s=30)
    assert [j.database for j in jobs] == ["notes", "notes", "notes"]


def test_within_a_database_the_oldest_job_is_claimed_first(queue):
    _fill(queue, "notes", 5)
    jobs = queue.jobs.claim(["notes"], limit=2, lease_ttl_s=30)
    assert [j.uri for j in jobs] == ["file:///notes/0.pdf", "file:///notes/1.pdf"]
