"""``run-batch --dry-run``: what a run would add, update and delete, writing nothing (docs/ingester.md).

Each source is listed and compared with what its database holds (the
documents' ``source_revision``, the same truth a run reconciles its sync state
with), through a read-only open: no database, queue or folder is created, no
lock taken, no model loaded, so it runs beside a ``serve`` too. A database
that does not exist yet holds nothing, so every file would be added. The
roots are checked first, as a run does.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from haiku.core.config import AppConfig
from haiku.core.errors import SourceUnavailableError, missing_database
from haiku.core.scope import DatabaseRef
from haiku.ingester.checks import check_roots, ingested_refs, select_databases, sources_of
from haiku.ingester.errors import SweepError
from haiku.ingester.pipeline.process import CONTENT_HASH, SOURCE_ID, SOURCE_REVISION
from haiku.ingester.queue import SyncRecord
from haiku.ingester.report import BatchReport
from haiku.ingester.sources.sweep import check_listing, list_source, plan_sweep


async def stored_records(config: AppConfig, ref: DatabaseRef) -> dict[str, dict[str, SyncRecord]]:
    """source id -> uri -> what the database holds for that file; empty for a database not created yet."""
    from haiku.core.store import Store

    if isinstance(ref.location, Path) and not ref.location.expanduser().exists():
        return {}
    try:
        store = await Store.open(ref, config, read_only=True)
    except SourceUnavailableError as exc:
        if str(exc) == missing_database(ref.name):
            return {}
        raise
    try:
        documents = await store.reads.list_documents()
    finally:
        await store.close()
    records: dict[str, dict[str, SyncRecord]] = defaultdict(dict)
    for document in documents:
        source_id = document.metadata.get(SOURCE_ID)
        if source_id and document.uri:
            records[source_id][document.uri] = SyncRecord(
                document.uri, document.metadata.get(SOURCE_REVISION), document.metadata.get(CONTENT_HASH), document.id
            )
    return records


async def plan_batch(config: AppConfig, database_name: str | None = None) -> BatchReport:
    """The report a ``run-batch`` would start from, every file with its action; nothing written."""
    names = select_databases(config, database_name)
    check_roots(config, names)
    refs = ingested_refs(config, names)
    report = BatchReport(dry_run=True)
    for name in names:
        database = report.database(name)
        stored = await stored_records(config, refs[name])
        for source in sources_of(config, name).values():
            try:
                listing, skipped = await list_source(source)
                plan = plan_sweep(listing, stored.get(source.id, {}), set(), delete_orphans=source.config.delete_orphans)
                check_listing(source, listing, plan)
            except SweepError as exc:
                database.sweep_failures.append(exc)
                continue
            database.plan(source.id, plan, list_files=True)
            database.skip(source.id, skipped)
    return report
