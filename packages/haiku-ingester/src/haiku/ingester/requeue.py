"""``retry``: queue dead files again without touching them (docs/ingester.md).

A dead job stays dead until its file changes; after fixing what killed it
(a converter installed, a permission, a full disk freed), an operator queues
it again here. Each file gets a new job with the dead one's operation and
revision and a fresh count of attempts; the dead job stays in the history. A
running ``serve`` claims it within a second, otherwise the next ``run-batch``
runs it (a run drains every queued job). Only the queue file is written: no
database is opened, no model loaded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from haiku.core.config import AppConfig
from haiku.core.errors import database_label
from haiku.ingester.checks import select_databases
from haiku.ingester.deadfiles import DeadFile
from haiku.ingester.errors import IngesterError
from haiku.ingester.queue import IngestQueue


class RetryRefusedError(IngesterError):
    """``retry`` was asked for nothing, or for a job that is not a dead file's latest job."""


@dataclass
class RetryReport:
    queued: list[DeadFile] = field(default_factory=list)

    def summary(self) -> str:
        return f"Queued {len(self.queued)} dead file(s) again"


def retry_dead(
    config: AppConfig, database_name: str | None, job_ids: Sequence[int], *, all_dead: bool = False
) -> RetryReport:
    if bool(job_ids) == all_dead:
        raise RetryRefusedError(
            "name the dead jobs to retry (their ids, from `haiku-ingester status --dead`) or pass --all, not both"
            if job_ids
            else "name the dead jobs to retry (their ids, from `haiku-ingester status --dead`), or pass --all"
        )
    names = select_databases(config, database_name)
    path = config.queue_path
    if not path.is_file():
        raise RetryRefusedError(f"there is no job queue at {path} yet, so no dead job to retry")
    configured = {(name, s.source_id) for name in names for s in config.ingester.databases[name].sources}
    queue = IngestQueue(path)
    try:
        dead = [j for j in queue.jobs.dead_jobs(names) if (j.database, j.source_id) in configured]
        if job_ids:
            by_id = {j.id: j for j in dead}
            missing = [i for i in job_ids if i not in by_id]
            if missing:
                raise RetryRefusedError(_not_dead(queue, missing, database_name))
            dead = [by_id[i] for i in dict.fromkeys(job_ids)]
        queue.jobs.requeue_dead(dead)
    finally:
        queue.close()
    return RetryReport([DeadFile.from_job(j) for j in dead])


def _not_dead(queue: IngestQueue, job_ids: list[int], database_name: str | None) -> str:
    """Why each id is not retried: unknown, not dead, a file with a later job, or another database."""
    reasons = []
    for job_id in job_ids:
        job = queue.jobs.get(job_id)
        if job is None:
            reasons.append(f"job {job_id} does not exist")
        elif database_name is not None and job.database != database_name:
            reasons.append(f"job {job_id} belongs to {database_label(job.database)}, not '{database_name}'")
        elif job.status != "dead":
            reasons.append(f"job {job_id} is {job.status}, not dead")
        else:
            reasons.append(f"job {job_id} is no longer its file's latest job, or its source is not configured")
    return "; ".join(reasons) + "; `haiku-ingester status --dead` lists the dead files and their job ids"
