"""Where the writes of ``add`` and ``delete`` happen (docs/ingester.md, "Adding documents").

A database's writes are queued as jobs of its ``manual`` source, then either
handed to the ``serve`` that owns the database (it claims them within a
second; the caller waits for each job to end, or not), or, with no daemon,
run here: the session takes the database's ownership lock and drains its
queue through the same pipeline as ``run-batch``. Either way each queued uri
ends with one outcome, read from the queue and the sync state.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from haiku.core.config import AppConfig, IngestedDatabaseConfig
from haiku.core.errors import DatabaseLockedError, database_label
from haiku.core.scope import DatabaseScope
from haiku.ingester.app import IngesterApp
from haiku.ingester.manual.errors import AddRefusedError
from haiku.ingester.manual.source import MANUAL_SOURCE_ID
from haiku.ingester.manual.spool import Spool
from haiku.ingester.owner import read_owner
from haiku.ingester.queue import IngestQueue, Op, SyncRecord

POLL_S = 0.2
WRITTEN = ("added", "updated", "unchanged", "deleted", "queued")


@dataclass
class AddResult:
    """What became of one argument: its document (id, uri, chunks) and outcome.

    ``outcome``: added, updated, unchanged, deleted, queued (``--no-wait``),
    skipped (the file is not taken, ``error`` says why) or failed.
    """

    argument: str
    uri: str | None
    outcome: str
    document_id: str | None = None
    chunks: int = 0
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.outcome in WRITTEN

    def as_json(self) -> dict[str, Any]:
        return {
            "argument": self.argument, "id": self.document_id, "uri": self.uri, "chunks": self.chunks,
            "outcome": self.outcome, "error": self.error,
        }  # fmt: skip


def writable_config(config: AppConfig, database: str) -> AppConfig:
    """The configuration with ``database`` ingested (with no sources when ``ingester.databases`` lacks it)."""
    ref = DatabaseScope.resolve(config, database_name=database).databases[
        0
    ]  # an unknown name is refused here
    if ref.tag is not None:
        raise AddRefusedError(
            f"{database_label(database)} is configured at tag '{ref.tag}', which is read-only; "
            "documents are added to the live database"
        )
    if database in config.ingester.databases:
        return config
    derived = config.model_copy(deep=True)
    derived.ingester.databases[database] = IngestedDatabaseConfig()
    return derived


class Session:
    """The writes of one database for one command (or one ``Ingester``)."""

    def __init__(self, config: AppConfig, database: str, queue: IngestQueue, app: IngesterApp | None) -> None:
        self.config = config
        self.database = database
        self.queue = queue
        self.app = app  # None: a running serve owns the database and writes
        self.spool = Spool(config.data_dir)

    @property
    def handed_off(self) -> bool:
        return self.app is None

    @classmethod
    async def open(cls, config: AppConfig, database: str) -> Session:
        config = writable_config(config, database)
        app = IngesterApp(config, database_name=database)
        app.command = "add"
        try:
            pipeline = await app.start()
        except DatabaseLockedError as exc:
            command = str((exc.holder or {}).get("command") or "")
            if not command.endswith(" serve"):
                raise
            return cls(config, database, IngestQueue(config.queue_path), None)
        return cls(config, database, pipeline.queue, app)

    async def close(self) -> None:
        if self.app is not None:
            await self.app.close()
        else:
            self.queue.close()

    # --- queueing ------------------------------------------------------------------------
    def record(self, uri: str) -> SyncRecord | None:
        return self.queue.sync.get(self.database, MANUAL_SOURCE_ID, uri)

    def enqueue(self, uri: str, op: Op, revision: str | None, *, forced: bool = False) -> None:
        self.queue.jobs.enqueue_many(self.database, MANUAL_SOURCE_ID, [(uri, op, revision)], forced=forced)
        if self.app is not None:
            self.app.wake.set()

    def live(self, uri: str) -> bool:
        rows = self.queue.db.query(
            "SELECT 1 FROM jobs WHERE database = ? AND source_id = ? AND uri = ? AND status IN ('queued', 'claimed') "
            "LIMIT 1",
            (self.database, MANUAL_SOURCE_ID, uri),
        )
        return bool(rows)

    def latest_job(self, uri: str) -> tuple[str, str | None] | None:
        """``(status, last_error)`` of the newest job of this document."""
        rows = self.queue.db.query(
            "SELECT status, last_error FROM jobs WHERE database = ? AND source_id = ? AND uri = ? "
            "ORDER BY id DESC LIMIT 1",
            (self.database, MANUAL_SOURCE_ID, uri),
        )
        return (rows[0]["status"], rows[0]["last_error"]) if rows else None

    # --- running -------------------------------------------------------------------------
    async def run(self, uris: Sequence[str], *, wait: bool = True) -> bool:
        """Let the queued jobs run: here (draining the database's queue), or by the daemon.

        Returns False when they were left queued: not waited for, or the daemon stopped meanwhile.
        """
        if self.app is not None:
            from haiku.ingester.runner import drain_queue

            await drain_queue(self.app, asyncio.Event(), [self.database], progress=False, command="add")
            return True
        if not wait:
            return False
        while any(self.live(uri) for uri in uris):
            owner = read_owner(self.config.queue_path)
            if owner is None or owner.get("command") != "serve":
                return False  # the daemon stopped: the jobs stay queued for the next serve or run-batch
            await asyncio.sleep(POLL_S)
        return True

    async def outcome(
        self, argument: str, uri: str, before: SyncRecord | None, *, ran: bool, forced: bool = False
    ) -> AddResult:
        """``forced``: the document was written again for a new title or metadata on the same content."""
        if not ran and self.live(uri):
            return AddResult(argument, uri, "queued")
        job = self.latest_job(uri)
        after = self.record(uri)
        if job is None:
            return AddResult(argument, uri, "failed", error="no job of this document was found in the queue")
        status, error = job
        if status == "dead":
            return AddResult(argument, uri, "failed", before.document_id if before else None, error=error)
        if after is None or after.document_id is None:
            if after is not None and after.skipped:
                return AddResult(argument, uri, "skipped", error=f"the file is not taken ({after.skipped})")
            return AddResult(argument, uri, "deleted", before.document_id if before else None)
        if before is None or before.document_id is None:
            outcome = "added"
        elif (before.content_hash, before.document_id) != (after.content_hash, after.document_id):
            outcome = "updated"
        else:
            outcome = "updated" if forced else "unchanged"
        return AddResult(argument, uri, outcome, after.document_id)

    async def count_chunks(self, results: list[AddResult]) -> None:
        ids = [r.document_id for r in results if r.document_id and r.outcome not in ("deleted", "failed")]
        if not ids:
            return
        async with self.reading() as store:
            counts = await store.reads.chunk_counts(ids)
        for result in results:
            if result.document_id in counts and result.outcome not in ("deleted", "failed"):
                result.chunks = counts[result.document_id]

    @contextlib.asynccontextmanager
    async def reading(self) -> Any:
        """The database to read: the session's own store, or (beside a daemon) a fresh read-only one."""
        if self.app is not None:
            yield self.app.databases[self.database].store
            return
        from haiku.core.store import Store

        ref = DatabaseScope.resolve(self.config, database_name=self.database).databases[0]
        store = await Store.open(ref, self.config, read_only=True)
        try:
            yield store
        finally:
            await store.close()

    def prune(self) -> int:
        """Drop the kept bytes whose jobs ended, and what is kept of deleted documents."""

        def known(uri: str) -> bool:
            record = self.record(uri)
            return record is not None and record.document_id is not None

        return self.spool.prune(self.database, self.live, known)
