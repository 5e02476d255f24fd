"""``status``: what the queue says about each database and source (docs/ingester.md).

Read from the queue file alone: no database is opened, no model loaded. A
file's current state is its latest job, so a file that failed and was later
ingested is no longer counted dead. Whether a ``serve`` (or ``run-batch``) is
running comes from the lock it holds beside the queue (``owner``); a
database's document count is the files its sources have in it. ``written``
totals what the ingester wrote to each database since it started: documents,
chunks, and how many chunks were embedded or kept their stored vector.
``processing`` compares the processing identity the database recorded, as the
ingester last saw it, with the configured one (``haiku.core.processing_identity``),
and names a re-processing left unfinished. ``unreadable_pages`` names, per
source, each stored file with pages OCR could not read and those pages. ``http`` says whether the daemon's
endpoint answers, when ``ingester.http`` is enabled (docs/operations.md).
"""

from __future__ import annotations

import json
import os
from typing import Any

from haiku.core.config import AppConfig
from haiku.core.errors import database_label
from haiku.ingester.checks import select_databases
from haiku.ingester.deadfiles import DeadFile, uri_path
from haiku.ingester.deadfiles import iso_time as _iso
from haiku.ingester.owner import read_owner
from haiku.ingester.queue import JobQueue, QueueDatabase
from haiku.ingester.queue.processing import NotedProcessing, ReprocessingRun, read_noted, read_runs
from haiku.ingester.queue.totals import read_totals
from haiku.ingester.skips import SkipReason, SkipTally


def collect_status(config: AppConfig, database_name: str | None = None, *, probe: bool = True) -> dict[str, Any]:
    """The report; ``probe=False`` leaves ``http`` out (the daemon's own endpoint asking itself)."""
    from haiku.ingester.http.probe import probe_endpoint

    names = select_databases(config, database_name)
    path = config.queue_path
    report: dict[str, Any] = {
        "queue": os.path.abspath(path), "queue_exists": path.is_file(), "running": read_owner(path), "databases": [],
    }
    if probe:
        report["http"] = probe_endpoint(config.ingester.http)
    rows: dict[str, list[Any]] = {"counts": [], "sweeps": [], "job_skips": [], "by_source": [], "unreadable": []}
    dead_files: list[DeadFile] = []
    documents: dict[str, int] = {}
    totals: dict[str, dict[str, Any]] = {}
    noted: dict[str, NotedProcessing] = {}
    runs: dict[str, ReprocessingRun] = {}
    if path.is_file() and names:
        db = QueueDatabase(path, read_only=True)
        marks = ",".join("?" * len(names))
        try:
            rows["counts"] = db.query(
                f"SELECT database, source_id, status, COUNT(*) AS n FROM jobs WHERE database IN ({marks}) "
                "AND status IN ('queued', 'claimed') GROUP BY database, source_id, status",
                names,
            )
            dead_files = [DeadFile.from_job(job) for job in JobQueue(db).dead_jobs(names)]
            rows["sweeps"] = db.query(f"SELECT * FROM sweeps WHERE database IN ({marks})", names)
            documents = {
                r["database"]: r["n"]
                for r in db.query(
                    f"SELECT database, COUNT(*) AS n FROM sync_state WHERE database IN ({marks}) "
                    "AND document_id IS NOT NULL GROUP BY database",
                    names,
                )
            }
            rows["by_source"] = db.query(  # each source's documents; `manual`: added by hand
                f"SELECT database, source_id, COUNT(*) AS n FROM sync_state WHERE database IN ({marks}) "
                "AND document_id IS NOT NULL GROUP BY database, source_id",
                names,
            )
            totals = read_totals(db, names)
            columns = {r["name"] for r in db.query("PRAGMA table_info(sync_state)")}  # older queues lack some
            if "unreadable" in columns:
                rows["unreadable"] = db.query(
                    f"SELECT database, source_id, uri, unreadable FROM sync_state WHERE database IN ({marks}) "
                    "AND unreadable IS NOT NULL AND document_id IS NOT NULL ORDER BY uri",
                    names,
                )
            if "skipped" in columns:
                rows["job_skips"] = db.query(
                    f"SELECT database, source_id, uri, skipped FROM sync_state WHERE database IN ({marks}) "
                    "AND skipped IS NOT NULL",
                    names,
                )
            noted, runs = read_noted(db, names), read_runs(db, names)
        finally:
            db.close()
    running = report["running"]
    if running is not None:  # what it ingests with, against the configuration file
        from haiku.core.processing_identity import processing_identity
        from haiku.ingester.processing import compare_running

        running["processing"] = compare_running(running.get("processing"), processing_identity(config))
    for name in names:
        configured = [s.source_id for s in config.ingester.databases[name].sources]
        seen = {r["source_id"] for key in rows for r in rows[key] if r["database"] == name}
        seen |= {d.source_id for d in dead_files if d.database == name}
        sources = []
        for source_id in configured + sorted(seen - set(configured)):
            entry: dict[str, Any] = {"id": source_id, "configured": source_id in configured}
            for status in ("queued", "claimed"):
                entry[status] = sum(
                    r["n"] for r in rows["counts"]
                    if r["database"] == name and r["source_id"] == source_id and r["status"] == status
                )
            dead = [d for d in dead_files if d.database == name and d.source_id == source_id]
            entry["dead"] = len(dead)
            entry["documents"] = sum(
                r["n"] for r in rows["by_source"] if r["database"] == name and r["source_id"] == source_id
            )
            sweep = next((r for r in rows["sweeps"] if r["database"] == name and r["source_id"] == source_id), None)
            entry["last_sweep_at"] = _iso(sweep["last_sweep_at"]) if sweep else None
            entry["last_sweep_status"] = sweep["last_status"] if sweep else None
            entry["last_sweep_error"] = sweep["last_error"] if sweep else None
            # What the last good sweep's listing skipped, and the files jobs skipped (not text) since.
            counted = sweep["skipped"] if sweep is not None and "skipped" in sweep.keys() else None
            skipped = SkipTally.from_json(json.loads(counted) if counted else None)
            for row in rows["job_skips"]:
                if row["database"] == name and row["source_id"] == source_id:
                    skipped.add(SkipReason(row["skipped"]), row["uri"].rsplit("/", 1)[-1])
            entry["skipped"] = skipped.as_json()
            entry["dead_jobs"] = [d.as_json() for d in dead]
            entry["unreadable_pages"] = [
                {"uri": row["uri"], "path": uri_path(row["uri"]), "pages": json.loads(row["unreadable"])}
                for row in rows["unreadable"] if row["database"] == name and row["source_id"] == source_id
            ]  # fmt: skip
            sources.append(entry)
        written = totals.get(name)
        if written is not None:
            written = {**written, "since": _iso(written["since"])}
        report["databases"].append(
            {
                "name": name, "documents": documents.get(name, 0), "sources": sources, "written": written,
                "processing": processing_status(config, noted.get(name), runs.get(name)),
            }
        )
    return report


def processing_status(
    config: AppConfig, noted: NotedProcessing | None, run: ReprocessingRun | None
) -> dict[str, Any]:
    """``{state, changes, reprocessing}``; state ``not_seen`` until the ingester has opened the database."""
    from haiku.core.processing_identity import compare_processing, processing_identity

    if noted is None:
        entry: dict[str, Any] = {"state": "not_seen", "changes": [], "formats_added": []}
    else:
        entry = compare_processing(noted.recorded, processing_identity(config), documents=noted.documents).as_json()
    entry["reprocessing"] = (
        {"documents": run.documents, "started_at": _iso(run.started_at)} if run is not None else None
    )
    return entry


def render_processing(name: str, processing: dict[str, Any], kept_by: str | None = None) -> str:
    """``kept_by``: the running ingester that keeps other settings than the configured ones."""
    from haiku.core.processing_identity import ProcessingChange, ProcessingDrift
    from haiku.ingester.cli_hints import RESTART_COMMAND, reprocess_hint

    state = processing["state"]
    if state == "not_seen":
        line = "not known until the ingester opens the database"
    else:
        changes = tuple(ProcessingChange(**change) for change in processing["changes"])
        drift = ProcessingDrift(state, changes)
        line = drift.predicate(name, kept_by=kept_by, reprocess=reprocess_hint(name), restart=RESTART_COMMAND)
    run = processing.get("reprocessing")
    if run is not None:
        line += (
            f"; a reprocess started {run['started_at']} is unfinished "
            f"(`haiku-ingester reprocess --db-name {name}` completes it)"
        )
    return f"  processing: {line}"


def render_status(report: dict[str, Any]) -> str:
    lines = [f"queue: {report['queue']}" + ("" if report["queue_exists"] else " (not created yet)")]
    running = report["running"]
    kept_by = None
    if running:
        lines.append(f"running: {running['command']} (pid {running['pid']}, since {running['since']})")
        encoder = running.get("encoder")
        if encoder:
            where = f"{encoder.get('device')} ({encoder.get('precision')}, {encoder.get('runtime')}"
            lines.append(f"  embedding documents on {where}{', on Ray' if encoder.get('engine') == 'ray' else ''})")
        kept = running.get("processing")
        if kept is not None and not kept["applied"]:
            kept_by = f"{running['command']} (pid {running['pid']})"
            lines.append(_kept_settings_line(running["command"], kept["changes"]))
    else:
        lines.append("running: no serve or run-batch for this configuration")
    http = report.get("http")
    if http is not None:
        if http["answers"]:
            lines.append(f"http endpoint: answers on {http['address']}")
        elif http["answers"] is None:
            lines.append(f"http endpoint: not asked ({http['detail']})")
        else:
            lines.append(f"http endpoint: does not answer on {http['address']} ({http['detail']})")
    if not report["databases"]:
        lines.append("ingester.databases names no database")
    for database in report["databases"]:
        lines.append(f"database {database['name']}: {database['documents']} document(s)")
        lines.append(render_processing(database["name"], database["processing"], kept_by))
        written = database.get("written")
        if written is not None:
            lines.append(
                f"  written since {written['since']}: {written['documents']} document(s), {written['chunks']} "
                f"chunk(s), {written['embedded']} embedded, {written['reused']} reused"
            )
        for source in database["sources"]:
            sweep = source["last_sweep_at"] or "never"
            if source["last_sweep_status"] == "failed":
                sweep += f" (failed: {source['last_sweep_error']})"
            added = source["id"] == "manual"  # documents added by hand: never swept
            note = " (added by hand)" if added else "" if source["configured"] else " (no longer configured)"
            lines.append(
                f"  source {source['id']}{note}: {source.get('documents', 0)} document(s), "
                f"queued {source['queued']}, claimed {source['claimed']}, "
                f"dead {source['dead']}" + ("" if added else f"; last sweep {sweep}")
            )
            skipped = SkipTally.from_json(source.get("skipped"))
            if skipped:
                lines.append(f"    {skipped.describe()}")
            for job in source["dead_jobs"]:
                lines.append(f"    dead {job['path']}: {job['reason']}")
            for scan in source.get("unreadable_pages", []):
                pages = ", ".join(str(page) for page in scan["pages"])
                lines.append(f"    unreadable {scan['path']}: page(s) {pages} yielded almost no text to OCR")
    return "\n".join(lines)


def _kept_settings_line(command: str, changes: list[dict[str, Any]]) -> str:
    """The running ingester ingests with other processing settings than the configuration file names."""
    from haiku.ingester.processing import describe_running_changes

    named = describe_running_changes(changes) or "the converter packages or format table"
    return (
        f"  processing settings: the configuration file names other ones than this {command} started with "
        f"({named}); {command} refuses to reload them, so it keeps ingesting with the ones it started "
        "with until it is restarted"
    )


def dead_report(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Every dead file of a ``collect_status`` report, the most recent first (``status --dead``)."""
    files = [job for database in report["databases"] for source in database["sources"] for job in source["dead_jobs"]]
    return sorted(files, key=lambda job: (job["at"] or "", job["job_id"] or 0), reverse=True)


def render_dead(files: list[dict[str, Any]]) -> str:
    """One line per dead file: its job id (for ``retry``), database, source, path once, reason."""
    if not files:
        return "no dead files"
    return "\n".join(
        f"job {job['job_id']}: {database_label(job['database'])}, source {job['source']}: {job['path']}: {job['reason']}"
        f" ({job['attempts']} attempt(s), {job['at']})"
        for job in files
    )
