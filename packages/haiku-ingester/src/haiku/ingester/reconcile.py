"""Bringing a database and its sync state back into agreement on start (docs/ingester.md).

The database is the truth: its documents' metadata (``source_id``,
``source_revision``, ``content_hash``) rebuild lost or stale sync records, and a
record whose document is gone is dropped so the file is ingested again. Orphan
chunks a crash left behind are removed.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from haiku.core.convert.ocr import UNREADABLE_PAGES
from haiku.ingester.pipeline.process import CONTENT_HASH, SOURCE_ID, SOURCE_REVISION
from haiku.ingester.queue import SyncState, SyncUpdate, unreadable_json


@dataclass(frozen=True)
class ReconcileReport:
    documents: int
    restored: int
    dropped: int
    orphan_chunks: int


async def reconcile(database: str, store, sync: SyncState, source_ids: Collection[str]) -> ReconcileReport:
    documents = await store.reads.list_documents()
    records = sync.records(database)
    present: dict[tuple[str, str], SyncUpdate] = {}
    for document in documents:
        source_id = document.metadata.get(SOURCE_ID)
        if source_id not in source_ids or not document.uri:
            continue
        present[(source_id, document.uri)] = SyncUpdate(
            revision=document.metadata.get(SOURCE_REVISION),
            content_hash=document.metadata.get(CONTENT_HASH),
            document_id=document.id,
            unreadable=unreadable_json(document.metadata.get(UNREADABLE_PAGES)),
        )
    changes: list[tuple[str, str, SyncUpdate]] = []
    restored = dropped = 0
    for (source_id, uri), wanted in present.items():
        record = records.get((source_id, uri))
        if record is None or (record.revision, record.content_hash, record.document_id) != (
            wanted.revision,
            wanted.content_hash,
            wanted.document_id,
        ):
            changes.append((source_id, uri, wanted))
            restored += 1
    for (source_id, uri), record in records.items():
        # A record with no document is a file a job skipped (docs/ingester.md, "Skipped files"): kept.
        if (source_id, uri) not in present and record.document_id is not None:
            changes.append((source_id, uri, SyncUpdate(delete=True)))
            dropped += 1
    if changes:
        sync.put_many(database, changes)
    orphans = await store.writer().orphans.remove_orphan_chunks()
    return ReconcileReport(documents=len(documents), restored=restored, dropped=dropped, orphan_chunks=orphans)
