"""``IngesterApp``: every ingested database from one process (docs/ingester.md).

One queue, one conversion pool, one embedder and one worker pool serve all the
databases; each database has its own store, ownership lock and sources. The
daemon, ``run-batch`` and ``reprocess`` drive the same app; databases can be
added and removed while it runs (reload). ``start`` builds the frozen
``Pipeline`` (``haiku.ingester.pipeline.parts``) the worker pool receives.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from haiku.core.config import AppConfig
from haiku.core.processing_identity import processing_identity
from haiku.core.scope import DatabaseRef
from haiku.ingester.checks import (
    check_distinct_locations,
    check_unique_sources,
    ingested_refs,
    location_identity,
    select_databases,
    sources_of,
)
from haiku.ingester.databases import DatabaseRuntime
from haiku.ingester.errors import NothingToIngestError
from haiku.ingester.logs import get_logger
from haiku.ingester.manual.source import MANUAL_SOURCE_ID, manual_source, manual_source_ids
from haiku.ingester.metrics import IngesterMetrics
from haiku.ingester.pipeline.engine import check_engine
from haiku.ingester.pipeline.parts import Pipeline, build_pipeline
from haiku.ingester.pipeline.pictures import check_picture_model
from haiku.ingester.processing import check_processing
from haiku.ingester.queue import IngestQueue, SyncState
from haiku.ingester.reconcile import reconcile
from haiku.ingester.sources.fs import FolderSource
from haiku.ingester.sources.watching import Change


class IngesterApp:
    def __init__(
        self,
        config: AppConfig,
        database_name: str | None = None,
        config_path: str | Path | None = None,
        *,
        metrics: IngesterMetrics | None = None,
        command: str = "run-batch",
        warn_processing: bool = True,
    ) -> None:
        """``command``: the command that runs this app, named to a second owner its database locks refuse.
        ``warn_processing``: warn of a database processed with other settings (``reprocess``, the remedy,
        does not)."""
        if database_name is not None and config_path is not None:
            raise ValueError(
                "database_name runs one database once (run-batch); config_path serves and reloads them all; "
                "pass one of them"
            )
        self.config = config
        self.database_name = database_name
        self.config_path = Path(config_path) if config_path is not None else None
        self.command = command
        self.warn_processing = warn_processing
        self.databases: dict[str, DatabaseRuntime] = {}
        self.started_at = time.time()
        # What the pipeline did, for /metrics (serve) and --metrics-file (run-batch): docs/operations.md.
        self.metrics = metrics or IngesterMetrics(engine=config.ingester.engine.type, process=False)
        self.wake = asyncio.Event()
        self.log = get_logger()
        self._pipeline: Pipeline | None = None  # built by start, dropped by close

    @property
    def pipeline(self) -> Pipeline:
        """The queue and what runs its jobs, as ``start`` built them."""
        if self._pipeline is None:
            raise RuntimeError("the ingester is not started (IngesterApp.start builds its pipeline)")
        return self._pipeline

    # --- validation --------------------------------------------------------------
    def selected_names(self) -> list[str]:
        """The databases this app writes, after the refusals that need no database open."""
        check_unique_sources(self.config)
        names = select_databases(self.config, self.database_name)
        check_distinct_locations(ingested_refs(self.config))
        return names

    def source_ids(self) -> set[tuple[str, str]]:
        return {
            (name, source.source_id)
            for name, entry in self.config.ingester.databases.items()
            for source in entry.sources
        } | manual_source_ids(self.config)

    # --- lifecycle ---------------------------------------------------------------
    async def start(self, *, require_databases: bool = False) -> Pipeline:
        """Lock and open the databases, bring the queue into agreement with them, build the pipeline."""
        check_engine(self.config)
        check_picture_model(self.config)  # before any database is created (docs/pictures.md)
        names = self.selected_names()
        if not names and require_databases:
            raise NothingToIngestError(
                "ingester.databases names no database, so there is nothing to ingest; "
                "add a database with its sources under ingester.databases"
            )
        refs = ingested_refs(self.config, names)
        queue: IngestQueue | None = None
        try:
            for name in names:
                await self._lock_database(name, refs[name])
            queue = IngestQueue(self.config.queue_path)
            await self._open_stores(names, queue)
            check_distinct_locations({n: self.databases[n].ref for n in names})
            removed = queue.jobs.delete_live_jobs_of_unconfigured(self.source_ids())
            if removed:
                self.log.info("dropped jobs of sources no longer configured", jobs=removed)
            released = queue.jobs.release_claims(names, count_attempt=True)
            if released:
                self.log.warning("requeued jobs a previous run left claimed", jobs=released)
            for name in names:
                await self._reconcile(self.databases[name], queue.sync)
            self._pipeline = build_pipeline(self.config, queue, self.metrics, self.wake)
        except BaseException:
            await self._close_databases()
            if queue is not None:
                queue.close()
            raise
        return self._pipeline

    def warm_up(self) -> None:
        """Start the conversion workers and load the model, in the background, once (``Warmup``)."""
        self.pipeline.warmup.begin()

    @property
    def warm(self) -> bool:
        """The conversion workers are started and the model loading has ended."""
        return self.pipeline.warmup.done

    async def _lock_database(self, name: str, ref: DatabaseRef) -> None:
        from haiku.core.store import OwnershipLock

        lock = OwnershipLock(ref, "ingester", holder=f"haiku-ingester {self.command}")
        await lock.acquire()
        sources = sources_of(self.config, name)
        self.databases[name] = DatabaseRuntime(
            name=name, ref=ref, sources=sources, lock=lock, manual=manual_source(self.config, name)
        )

    async def _open_stores(self, names: list[str], queue: IngestQueue) -> None:
        from haiku.core.store import Store

        async def open_one(name: str) -> None:
            runtime = self.databases[name]
            await runtime.attach(await Store.open(runtime.ref, self.config, create=True))
            self.log.info("database open", database=name, documents=await runtime.store.reads.count_documents())
            await check_processing(
                name, runtime.store, queue, processing_identity(self.config), warn=self.warn_processing
            )

        results = await asyncio.gather(*(open_one(n) for n in names), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        queue.totals.start(names)  # status counts what this run writes

    async def reconcile(self, runtime: DatabaseRuntime) -> None:
        """Bring the sync state of one open database back into agreement with what it holds."""
        await self._reconcile(runtime, self.pipeline.queue.sync)

    async def _reconcile(self, runtime: DatabaseRuntime, sync: SyncState) -> None:
        report = await reconcile(runtime.name, runtime.store, sync, {*runtime.sources, MANUAL_SOURCE_ID})
        if report.restored or report.dropped or report.orphan_chunks:
            self.log.info(
                "sync state reconciled",
                database=runtime.name,
                restored=report.restored,
                dropped=report.dropped,
                orphan_chunks=report.orphan_chunks,
            )

    # --- adding and removing databases (reload) ------------------------------------
    async def add_database(self, name: str) -> DatabaseRuntime:
        queue = self.pipeline.queue
        ref = ingested_refs(self.config, [name])[name]
        identity = location_identity(ref)
        for other in self.databases.values():
            if location_identity(other.ref) == identity:
                from haiku.core.errors import AmbiguousDatabaseError

                raise AmbiguousDatabaseError(
                    f"ingester.databases names '{other.name}' and '{name}' at one location, "
                    "and a database has one writer"
                )
        await self._lock_database(name, ref)
        try:
            await self._open_stores([name], queue)
            await self._reconcile(self.databases[name], queue.sync)
        except BaseException:
            runtime = self.databases.pop(name)
            await self._close_runtime(runtime)
            raise
        return self.databases[name]

    async def remove_database(self, name: str) -> None:
        """Stop its discovery, wait for its in-flight jobs, drop its queued jobs and sync state, close it."""
        runtime = self.databases.get(name)
        if runtime is None:
            return
        runtime.accepting = False
        await runtime.stop_discovery()
        await runtime.idle.wait()
        queue = self.pipeline.queue
        queue.jobs.delete_live_jobs(name)
        queue.sync.forget_database(name)
        del self.databases[name]
        await self._close_runtime(runtime)

    async def _close_runtime(self, runtime: DatabaseRuntime) -> None:
        if runtime.store is not None:
            try:
                await runtime.store.close()
            except Exception as exc:
                self.log.error("closing the database failed", database=runtime.name, error=str(exc))
            runtime.store = None
        if runtime.lock is not None:
            runtime.lock.release()
            runtime.lock = None

    # --- discovery → queue ---------------------------------------------------------
    def on_changes(self, source: FolderSource, changes: list[Change]) -> None:
        """Watcher changes become jobs (called on the loop)."""
        runtime = self.databases.get(source.database)
        if runtime is None or not runtime.accepting or self._pipeline is None:
            return
        queue = self._pipeline.queue
        items: list[tuple[str, Any, str | None]] = []
        for change in changes:
            if change.kind == "delete_tree":
                prefix = change.uri.rstrip("/") + "/"
                known = queue.sync.known(source.database, source.id)
                items += [(uri, "delete", None) for uri in known if uri.startswith(prefix)]
            elif change.kind == "skip":
                if change.skip is not None:
                    self.metrics.file_skipped(source.database, source.id, change.uri, change.skip)
                # A file now skipped (emptied, grown over the limit): only a known one has a document to delete.
                if queue.sync.get(source.database, source.id, change.uri) is not None:
                    items.append((change.uri, "delete", None))
            else:
                items.append((change.uri, change.kind, change.revision))
        if not items:
            return
        counts = queue.jobs.enqueue_many(source.database, source.id, items)
        self.log.info(
            "changes seen",
            database=source.database,
            source=source.id,
            upserts=sum(1 for i in items if i[1] == "upsert"),
            deletes=sum(1 for i in items if i[1] == "delete"),
            new_jobs=counts.get("inserted", 0),
        )
        self.wake.set()

    # --- closing -------------------------------------------------------------------
    async def close(self) -> None:
        for runtime in list(self.databases.values()):
            await runtime.stop_discovery()
        pipeline, self._pipeline = self._pipeline, None
        if pipeline is not None:
            await pipeline.stop()
        await self._close_databases()
        if pipeline is not None:
            pipeline.queue.close()

    async def _close_databases(self) -> None:
        # Together: each database's maintenance on close is bounded in time, so the stop is too (docs/ingester.md).
        await asyncio.gather(*(self._close_runtime(runtime) for runtime in list(self.databases.values())))
        self.databases.clear()
