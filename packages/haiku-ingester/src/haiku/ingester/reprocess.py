"""``reprocess --db-name NAME``: convert and chunk every document again under the configured settings.

See docs/ingester.md, "Re-processing". Every document of the database whose
source file is there gets a forced upsert in the durable queue: its file is
converted and chunked again even though it is unchanged, the vectors of chunk
texts the stored version already has are kept (as for an edit, only changed
texts are embedded), and it is written like any other change, in batches, one
document at a time visible. When every forced job is done the database records
the configured processing identity.

A run cut short (killed, stopped, a full disk) leaves its forced jobs queued
and its target noted in the queue: running it again, or a ``serve`` or
``run-batch`` in between, finishes them, and a rerun with the same settings
queues nothing new; a file whose forced job died is tried again. A document
whose source file is gone, or whose source is no longer configured, is kept as
it is and reported; it does not hold the identity back. The database is locked
for the ingester meanwhile (no ``serve`` runs beside it).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from haiku.core.config import AppConfig
from haiku.core.errors import database_label
from haiku.core.processing_identity import ProcessingChange, compare_processing, processing_identity
from haiku.ingester.app import IngesterApp
from haiku.ingester.checks import select_databases
from haiku.ingester.databases import DatabaseRuntime
from haiku.ingester.errors import IngesterError
from haiku.ingester.logs import get_logger
from haiku.ingester.owner import OwnerRecord
from haiku.ingester.pipeline.process import SOURCE_ID
from haiku.ingester.runner import drain_queue, stop_on_signals
from haiku.ingester.workers import Counts, Tally


class ReprocessRefusedError(IngesterError):
    """``reprocess`` needs one database named with ``--db-name``."""


@dataclass(frozen=True)
class KeptDocument:
    """A document left as it was: its source file cannot be read again."""

    source_id: str | None
    uri: str
    reason: str

    def as_json(self) -> dict[str, Any]:
        return {"source": self.source_id, "uri": self.uri, "reason": self.reason}


@dataclass(frozen=True)
class FailedDocument:
    source_id: str
    uri: str
    error: str

    def as_json(self) -> dict[str, Any]:
        return {"source": self.source_id, "uri": self.uri, "error": self.error}


@dataclass
class ReprocessReport:
    database: str
    identity: dict[str, Any]
    previous: dict[str, Any] | None
    changes: list[ProcessingChange] = field(default_factory=list)
    documents: int = 0  # documents whose file is converted again (this run's, or the resumed run's)
    jobs: Counts = field(default_factory=Counts)
    kept: list[KeptDocument] = field(default_factory=list)
    failed: list[FailedDocument] = field(default_factory=list)
    resumed: bool = False
    unchanged: bool = False  # already processed with these settings: nothing was done
    interrupted: bool = False
    recorded: bool = False  # the database now records ``identity``

    @property
    def ok(self) -> bool:
        return self.recorded or self.unchanged

    def summary(self) -> str:
        label = database_label(self.database)
        if self.unchanged:
            return f"{label} was processed with the configured settings already: 0 document(s) re-processed"
        counts = self.jobs
        done = (
            f"{counts.written} document(s) re-processed{' (resumed)' if self.resumed else ''}: {counts.chunks} "
            f"chunk(s), {counts.embedded} embedded, {counts.reused} reused"
        )
        if self.kept:
            done += f"; {len(self.kept)} kept as they were (source file gone)"
        if self.recorded:
            return f"Re-processed {label}: {done}; its processing settings are recorded"
        if self.interrupted:
            return f"Re-processing {label} was interrupted ({done}); rerun it to finish, the rest stays queued"
        return (
            f"Re-processing {label}: {done}; {len(self.failed)} failed, so the new settings are not recorded; "
            "rerun it once they are fixed (only they are tried again)"
        )

    def lines(self) -> list[str]:
        """One line per document kept or failed, for stderr."""
        out = [f"kept: {k.uri}: {k.reason}" for k in self.kept]
        return out + [f"failed: {f.uri}: {f.error}" for f in self.failed]

    def as_json(self) -> dict[str, Any]:
        return {
            "database": self.database,
            "ok": self.ok,
            "unchanged": self.unchanged,
            "resumed": self.resumed,
            "interrupted": self.interrupted,
            "recorded": self.recorded,
            "documents": self.documents,
            "jobs": self.jobs.as_dict(),
            "changes": [change.as_json() for change in self.changes],
            "kept": [k.as_json() for k in self.kept],
            "failed": [f.as_json() for f in self.failed],
            "identity": self.identity,
            "previous": self.previous,
        }


@dataclass
class _Plan:
    files: dict[str, list[tuple[str, str | None]]]  # source id -> (uri, revision) of each file read again
    kept: list[KeptDocument]

    @property
    def count(self) -> int:
        return sum(len(files) for files in self.files.values())

    def has(self, source_id: str, uri: str) -> bool:
        return any(u == uri for u, _ in self.files.get(source_id, []))


async def _plan(runtime: DatabaseRuntime) -> _Plan:
    """Which documents' files can be read again, and which documents are kept (and why)."""
    files: dict[str, list[tuple[str, str | None]]] = defaultdict(list)
    kept: list[KeptDocument] = []
    for document in await runtime.store.reads.list_documents():
        source_id = document.metadata.get(SOURCE_ID)
        source = runtime.source_for(source_id) if source_id else None  # `manual` too: documents added by hand
        if not document.uri:
            continue
        if source is None:
            why = f"its source {source_id} is no longer configured" if source_id else "it records no source"
            kept.append(KeptDocument(source_id, document.uri, why))
            continue
        entry = source.entry_for(source.path_for(document.uri))
        if entry is None:
            kept.append(KeptDocument(source_id, document.uri, "its source file is gone"))
            continue
        files[source.id].append((document.uri, entry.revision))
    return _Plan(dict(files), kept)


async def reprocess(config: AppConfig, database_name: str | None, *, progress: bool | None = None) -> ReprocessReport:
    """Re-process one database (``reprocess --db-name NAME``)."""
    if database_name is None:
        raise ReprocessRefusedError("name the database to re-process with --db-name, or re-process them all with --all")
    [report] = await _reprocess(config, database_name, progress=progress)
    return report


async def reprocess_all(config: AppConfig, *, progress: bool | None = None) -> list[ReprocessReport]:
    """Re-process every ingested database in one run (``reprocess --all``): one conversion pool and
    one embedding model serve them all, loaded once, not once per database."""
    return await _reprocess(config, None, progress=progress)


async def _reprocess(config: AppConfig, database_name: str | None, *, progress: bool | None) -> list[ReprocessReport]:
    names = select_databases(config, database_name)
    # No warning of a database processed with other settings: this is what the warning asks for.
    app = IngesterApp(config, database_name=database_name, command="reprocess", warn_processing=False)
    await app.start(require_databases=True)
    owner = OwnerRecord.take(config.queue_path, "reprocess")  # for `status`
    try:
        target = processing_identity(config)
        reports = [await _queue_database(app, name, target) for name in names]
        busy = [report for report in reports if not report.unchanged]
        if not busy:
            return reports
        with stop_on_signals() as stop:
            workers = await drain_queue(
                app, stop, [report.database for report in busy], progress=progress, command="reprocess"
            )
            interrupted = stop.is_set()
        for report in busy:
            await _finish_database(app, report, workers.tally, interrupted=interrupted)
        return reports
    finally:
        await app.close()
        if owner is not None:
            owner.release()


async def _queue_database(app: IngesterApp, name: str, target: dict[str, Any]) -> ReprocessReport:
    """The database's report, its forced jobs queued (or its run cut short resumed); ``unchanged`` when
    it already matches ``target``."""
    queue, runtime = app.pipeline.queue, app.databases[name]
    store = runtime.store
    previous = store.processing_identity
    drift = compare_processing(previous, target, documents=await store.reads.count_documents())
    report = ReprocessReport(name, target, previous, list(drift.changes))
    run = queue.processing.run_of(name)
    report.resumed = run is not None and run.target == target
    if drift.state in ("matches", "empty") and not report.resumed:
        report.unchanged = True
        return report
    plan = await _plan(runtime)
    report.kept = plan.kept
    if report.resumed:
        assert run is not None
        # The files whose forced job died in the run cut short are tried again.
        again = [j for j in queue.jobs.dead_jobs([name]) if j.forced and plan.has(j.source_id, j.uri)]
        queue.jobs.requeue_dead(again)
        report.documents = run.documents
    else:
        for source_id, entries in plan.files.items():
            queue.jobs.enqueue_many(name, source_id, [(uri, "upsert", rev) for uri, rev in entries], forced=True)
        queue.processing.run_started(name, target, plan.count)  # after the jobs: see the module docstring
        report.documents = plan.count
    get_logger(database=name).info(
        "reprocess started", documents=report.documents, kept=len(plan.kept), resumed=report.resumed,
        changed=[change.key for change in drift.changes] or None,
    )
    return report


async def _finish_database(app: IngesterApp, report: ReprocessReport, tally: Tally, *, interrupted: bool) -> None:
    """Count what the run did for the database, and record its identity when every forced job is done."""
    queue = app.pipeline.queue
    name = report.database
    store = app.databases[name].store
    report.interrupted = interrupted
    report.jobs = tally.of(name)
    report.failed = [
        FailedDocument(j.source_id, j.uri, error) for j, error in tally.dead_jobs if j.forced and j.database == name
    ]
    if not report.interrupted and not report.failed:
        await store.writer().processing.record(report.identity)
        queue.processing.note(name, report.identity, await store.reads.count_documents())
        queue.processing.run_finished(name)
        report.recorded = True
        get_logger(database=name).info("reprocess complete", **report.jobs.as_dict(), kept=len(report.kept))
