"""The ingester's side of the processing identity (docs/ingester.md, "Re-processing").

When the ingester opens a database it compares the identity the database
records with the configured one (``haiku.core.processing_identity``). A
database with no record adopts the configured identity only while it holds no
documents (nothing in it was processed otherwise); one with documents and no
record stays ``unknown``, nothing is guessed. ``serve`` and ``run-batch`` log
one warning per database whose identity is not the configured one, naming the
changed keys. What the database records is noted in the queue for ``status``.
"""

from __future__ import annotations

from typing import Any

from haiku.core.processing_identity import ProcessingDrift, compare_processing
from haiku.ingester.logs import get_logger
from haiku.ingester.queue import IngestQueue


async def check_processing(
    name: str, store: Any, queue: IngestQueue, configured: dict[str, Any], *, warn: bool = True
) -> ProcessingDrift:
    """Compare, adopt when empty, note for ``status``, warn once; returns the drift found."""
    documents = await store.count_documents()
    recorded = store.processing_identity
    if recorded is None and documents == 0:
        await store.record_processing(configured)
        recorded = configured
    queue.processing.note(name, recorded, documents)
    drift = compare_processing(recorded, configured, documents=documents)
    if warn and drift.state in ("differs", "unknown"):
        get_logger(database=name).warning(
            drift.summary(name), changed=[change.key for change in drift.changes] or None
        )
    return drift
