"""Dead files as an operator sees them: the path once, and the reason (docs/ingester.md).

A dead job keeps its error as the pipeline raised it, which starts with the
file's path (``/srv/docs/x.pdf: docling could not convert it``) or name. Shown
after the path, that prefix would name the file twice, so ``reason`` drops it.
``status``, ``run-batch`` and ``retry`` all describe a dead file this way.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from haiku.ingester.queue import Job
from haiku.ingester.sources.fs import path_of_uri


def iso_time(ts: float | None) -> str | None:
    """Epoch seconds as ``2026-01-31T12:00:00Z`` (None stays None)."""
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds").replace("+00:00", "Z") if ts else None


def uri_path(uri: str) -> str:
    """The file a URI names as an operator reads it: its path for a local file, else the URI."""
    return str(path_of_uri(uri)) if uri.startswith("file:") else uri


def reason_of(path: str, error: str | None) -> str:
    """The error without a leading ``<path>: `` or ``<file name>: ``."""
    text = error or "no reason recorded"
    name = path.rsplit("/", 1)[-1]
    for prefix in (f"{path}: ", f"{name}: "):
        if text.startswith(prefix):
            return text[len(prefix):]
    return text


@dataclass(frozen=True)
class DeadFile:
    """One file whose latest job is dead."""

    job_id: int | None
    database: str
    source_id: str
    uri: str
    error: str | None
    attempts: int = 0
    finished_at: float | None = None

    @classmethod
    def from_job(cls, job: Job) -> DeadFile:
        return cls(job.id, job.database, job.source_id, job.uri, job.last_error, job.attempts, job.finished_at)

    @property
    def path(self) -> str:
        return uri_path(self.uri)

    @property
    def reason(self) -> str:
        return reason_of(self.path, self.error)

    def line(self) -> str:
        """``<path>: <reason>``: the file named once."""
        return f"{self.path}: {self.reason}"

    def as_json(self) -> dict[str, Any]:
        return {
            "job_id": self.job_id,
            "database": self.database,
            "source": self.source_id,
            "uri": self.uri,
            "path": self.path,
            "reason": self.reason,
            "error": self.error,
            "attempts": self.attempts,
            "at": iso_time(self.finished_at),
        }
