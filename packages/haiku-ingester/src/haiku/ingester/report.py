"""What ``run-batch`` did, or with ``--dry-run`` would do: one report, one JSON schema (docs/cli.md).

``run-batch --json`` and ``run-batch --dry-run --json`` print the same object:

- ``dry_run``, ``ok``, ``interrupted``;
- ``planned``: what the sweeps found to ``add`` (a file with no document yet),
  ``update`` (a changed file) and ``delete`` (a document whose file is gone);
- ``jobs``: what the jobs did (``succeeded``, ``written``, ``deleted``,
  ``dead``, ``still_dead``, ``retried``, ``chunks``, ``embedded``, ``reused``),
  ``null`` in a dry run, where nothing runs;
- ``skipped``: the files the sources did not take, by reason
  (``haiku.ingester.skips``: ``{reason: {files, extensions?}}``);
- ``databases``: the same counts per database, its ``skipped`` per source
  (``{source: {reason: {files, …}}}``), its ``sweep_failures`` (source and
  error), and its ``files``: in a dry run every file with its ``action``; in a
  run the files that died, with their action, ``outcome`` (``dead`` or
  ``still_dead``) and ``reason``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from haiku.core.errors import database_label
from haiku.ingester.deadfiles import reason_of
from haiku.ingester.errors import SweepError
from haiku.ingester.skips import SkipTally
from haiku.ingester.sources.fs import path_of_uri
from haiku.ingester.sources.sweep import SweepPlan
from haiku.ingester.workers import Counts

SCHEMA_VERSION = 1
PLANNED = ("add", "update", "delete")
JOB_KEYS = (*Counts().as_dict(), "still_dead")


@dataclass(frozen=True)
class FileAction:
    """One file in the report: what is (or was) done with it, and how it ended when it died."""

    database: str
    source_id: str
    uri: str
    action: str  # add | update | delete
    outcome: str | None = None  # dead | still_dead; None in a dry run
    error: str | None = None

    @property
    def path(self) -> str:
        return str(path_of_uri(self.uri))

    def as_json(self) -> dict[str, Any]:
        return {
            "source": self.source_id,
            "path": self.path,
            "uri": self.uri,
            "action": self.action,
            "outcome": self.outcome,
            "reason": reason_of(self.path, self.error) if self.error is not None else None,
        }

    def line(self) -> str:
        """``dead: database 'a', source s: /path: reason`` (the file named once)."""
        label = (self.outcome or self.action).replace("_", " ")
        text = f"{label}: {database_label(self.database)}, source {self.source_id}: {self.path}"
        return text + (f": {reason_of(self.path, self.error)}" if self.error is not None else "")


@dataclass
class DatabaseReport:
    name: str
    planned: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PLANNED, 0))
    jobs: Counts = field(default_factory=Counts)
    still_dead: int = 0
    sweep_failures: list[SweepError] = field(default_factory=list)
    files: list[FileAction] = field(default_factory=list)
    skipped: dict[str, SkipTally] = field(default_factory=dict)  # per source

    def skip(self, source_id: str, tally: SkipTally) -> None:
        """Count files a source skipped (its listing's, or its jobs')."""
        self.skipped.setdefault(source_id, SkipTally()).merge(tally)

    def skip_lines(self) -> list[str]:
        """``skipped: database 'a', source s: 3 skipped: 2 unsupported type (.gz 2), 1 empty``, per source."""
        return [
            f"skipped: {database_label(self.name)}, source {source_id}: {tally.describe()}"
            for source_id, tally in self.skipped.items()
            if tally
        ]

    def plan(self, source_id: str, sweep: SweepPlan, *, list_files: bool) -> None:
        """Count a source's sweep plan (and, in a dry run, list each of its files)."""
        self.planned["add"] += sweep.added
        self.planned["update"] += sweep.updated
        self.planned["delete"] += len(sweep.deletes)
        if list_files:
            self.files += [
                FileAction(self.name, source_id, uri, "add" if uri in sweep.new else "update")
                for uri, _ in sweep.upserts
            ]
            self.files += [FileAction(self.name, source_id, uri, "delete") for uri in sweep.deletes]

    def jobs_json(self) -> dict[str, int]:
        counts = self.jobs.as_dict()
        counts["dead"] -= self.still_dead
        return {**counts, "still_dead": self.still_dead}


@dataclass
class BatchReport:
    dry_run: bool = False
    databases: dict[str, DatabaseReport] = field(default_factory=dict)
    interrupted: bool = False

    def database(self, name: str) -> DatabaseReport:
        return self.databases.setdefault(name, DatabaseReport(name))

    # --- totals ---------------------------------------------------------------------------
    @property
    def jobs(self) -> dict[str, int]:
        """The job counts of every database summed: ``succeeded``, ``dead`` (new in this run), … ."""
        totals = Counts().as_dict() | {"still_dead": 0}
        for database in self.databases.values():
            for key, value in database.jobs_json().items():
                totals[key] += value
        return totals

    def __getattr__(self, name: str) -> int:
        # report.succeeded, report.dead, report.embedded …: the totals of ``jobs``
        if name in JOB_KEYS:
            return self.jobs[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def skipped(self) -> SkipTally:
        return SkipTally.combined(t for d in self.databases.values() for t in d.skipped.values())

    @property
    def sweep_failures(self) -> list[SweepError]:
        return [f for d in self.databases.values() for f in d.sweep_failures]

    def dead_files(self, outcome: str) -> list[FileAction]:
        return [f for d in self.databases.values() for f in d.files if f.outcome == outcome]

    @property
    def ok(self) -> bool:
        return not self.dead and not self.sweep_failures and not self.interrupted

    # --- output ---------------------------------------------------------------------------
    def summary(self) -> str:
        if self.dry_run:
            planned = {key: sum(d.planned[key] for d in self.databases.values()) for key in PLANNED}
            skipped = self.skipped.total
            return (
                f"Dry run: would add {planned['add']}, update {planned['update']} and delete {planned['delete']} "
                "file(s)" + (f", and skip {skipped}" if skipped else "") + "; nothing was written"
            )
        line = f"Batch complete: {self.succeeded} succeeded, {self.dead} dead"
        if self.still_dead:
            line += f", {self.still_dead} still dead (unchanged since an earlier run)"
        if self.skipped:
            line += f", {self.skipped.total} skipped"
        if self.retried:
            line += f"; {self.retried} failed attempt(s) retried"
        return line

    def as_json(self) -> dict[str, Any]:
        databases = []
        for report in self.databases.values():
            databases.append(
                {
                    "name": report.name,
                    "planned": dict(report.planned),
                    "jobs": None if self.dry_run else report.jobs_json(),
                    "skipped": {source: tally.as_json() for source, tally in report.skipped.items()},
                    "sweep_failures": [{"source": f.source_id, "error": str(f)} for f in report.sweep_failures],
                    "files": [f.as_json() for f in report.files],
                }
            )
        return {
            "schema": SCHEMA_VERSION,
            "dry_run": self.dry_run,
            "ok": self.ok,
            "interrupted": self.interrupted,
            "planned": {key: sum(d["planned"][key] for d in databases) for key in PLANNED},
            "jobs": None if self.dry_run else self.jobs,
            "skipped": self.skipped.as_json(),
            "databases": databases,
        }
