"""The ingester's side of the processing identity (docs/ingester.md, "Re-processing").

When the ingester opens a database it compares the identity the database
records with the configured one (``haiku.core.processing_identity``). A
database with no record adopts the configured identity only while it holds no
documents (nothing in it was processed otherwise); one with documents and no
record stays ``unknown``, nothing is guessed. ``serve`` and ``run-batch`` log
one warning per database whose identity is not the configured one, naming the
changed keys. What the database records is noted in the queue for ``status``.

A running ``serve`` keeps the processing settings it started with: a reload
that changes them is refused (docs/ingester.md, "Reloading"). It notes them in
its owner record (``running_settings``), and ``status`` compares them with the
configuration file (``compare_running``), so it says what the daemon does
rather than what the file asks for.
"""

from __future__ import annotations

from typing import Any

from haiku.core.processing_identity import (
    ProcessingChange,
    ProcessingDrift,
    compare_processing,
    identity_digest,
)
from haiku.ingester.cli_hints import reprocess_hint
from haiku.ingester.logs import get_logger
from haiku.ingester.queue import IngestQueue


async def check_processing(
    name: str, store: Any, queue: IngestQueue, configured: dict[str, Any], *, warn: bool = True
) -> ProcessingDrift:
    """Compare, adopt when empty, note for ``status``, warn once; returns the drift found."""
    documents = await store.reads.count_documents()
    recorded = store.processing_identity
    if recorded is None and documents == 0:
        await store.writer().processing.record(configured)
        recorded = configured
    queue.processing.note(name, recorded, documents)
    drift = compare_processing(recorded, configured, documents=documents)
    if warn and drift.state in ("differs", "unknown"):
        get_logger(database=name).warning(
            drift.summary(name, reprocess=reprocess_hint(name)),
            changed=[change.key for change in drift.changes] or None,
        )
    return drift


def running_settings(configured: dict[str, Any]) -> dict[str, Any]:
    """What a running ingester notes for ``status``: its ``processing.*`` settings, and a digest of
    its whole identity (converter versions and the format table change only with the code)."""
    settings = {key: value for key, value in configured.items() if key.startswith("processing.")}
    return {"settings": settings, "digest": identity_digest(configured)}


def compare_running(running: dict[str, Any] | None, configured: dict[str, Any]) -> dict[str, Any] | None:
    """``{applied, changes}``: whether the running process ingests with the configured identity, and
    which ``processing.*`` keys differ (``running`` -> configured); None when it noted none."""
    if not isinstance(running, dict) or "digest" not in running:
        return None
    if running["digest"] == identity_digest(configured):
        return {"applied": True, "changes": []}
    settings = running.get("settings") or {}
    changes = [
        {"key": key, "running": settings.get(key), "configured": value}
        for key, value in configured.items()
        if key.startswith("processing.") and settings.get(key) != value
    ]
    return {"applied": False, "changes": changes}


def describe_running_changes(changes: list[dict[str, Any]]) -> str:
    """``processing.chunk_size 256 -> 100, …``: what the running process keeps -> what the file says."""
    return ", ".join(
        ProcessingChange(change["key"], change["running"], change["configured"]).describe() for change in changes
    )
