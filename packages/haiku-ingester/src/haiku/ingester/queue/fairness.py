"""Which ready jobs a claim takes when several databases have some (docs/ingester.md, "Queue and workers").

Oldest first within a database, and across databases the one with the fewest
jobs claimed goes next: a database whose small files were queued after another
database's long PDFs is not left waiting behind all of them, and each database
keeps a share of the workers while both have work.
"""

from __future__ import annotations

import heapq
import sqlite3
from collections.abc import Collection, Mapping, Sequence

# A ready job as a claim sees it: (not_before, id), oldest first.
Ready = tuple[float, int]


def fair_pick(ready: Mapping[str, Sequence[Ready]], claimed: Mapping[str, int], limit: int) -> list[int]:
    """Up to ``limit`` job ids from ``ready`` (per database, oldest first), each next one from the database
    holding the fewest claims so far (``claimed``, plus what this pick took); ties go to the oldest job."""
    heap: list[tuple[int, float, int, str, int]] = []
    for database, jobs in ready.items():
        if jobs:
            not_before, job_id = jobs[0]
            heapq.heappush(heap, (claimed.get(database, 0), not_before, job_id, database, 0))
    picked: list[int] = []
    while heap and len(picked) < limit:
        held, _, job_id, database, index = heapq.heappop(heap)
        picked.append(job_id)
        jobs = ready[database]
        if index + 1 < len(jobs):
            not_before, next_id = jobs[index + 1]
            heapq.heappush(heap, (held + 1, not_before, next_id, database, index + 1))
    return picked


def pick_ready(conn: sqlite3.Connection, databases: Collection[str], *, now: float, limit: int) -> list[int]:
    """The ids of the ready jobs a claim of ``limit`` takes (inside the claim's transaction)."""
    marks = ",".join("?" * len(databases))
    claimed = dict(
        conn.execute(
            f"SELECT database, COUNT(*) FROM jobs WHERE status = 'claimed' AND database IN ({marks}) GROUP BY database",
            tuple(databases),
        ).fetchall()
    )
    ready = {
        database: [
            (row[0], row[1])
            for row in conn.execute(
                "SELECT not_before, id FROM jobs WHERE database = ? AND status = 'queued' AND not_before <= ? "
                "ORDER BY not_before, id LIMIT ?",
                (database, now, limit),
            )
        ]
        for database in databases
    }
    return fair_pick(ready, claimed, limit)
