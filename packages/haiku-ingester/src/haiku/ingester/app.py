"""``IngesterApp``: every ingested database from one process (docs/ingester.md).

One queue, one conversion pool, one embedder and one worker pool serve all the
databases; each database has its own store, ownership lock and sources. The
daemon and ``run-batch`` drive the same app; databases can be added and removed
while it runs (reload).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
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
from haiku.ingester.errors import NothingToIngestError
from haiku.ingester.logs import get_logger
from haiku.ingester.metrics import IngesterMetrics
from haiku.ingester.pipeline.embed import EmbedBatcher
from haiku.ingester.pipeline.engine import Engine, build_engine, check_engine
from haiku.ingester.pipeline.pictures import check_picture_model, picture_describer
from haiku.ingester.pipeline.process import JobProcessor
from haiku.ingester.processing import check_processing
from haiku.ingester.queue import IngestQueue
from haiku.ingester.reconcile import reconcile
from haiku.ingester.sources.fs import FolderSource
from haiku.ingester.sources.watching import Change, FolderWatcher


@dataclass
class DatabaseRuntime:
    """One ingested database while the app runs."""

    name: str
    ref: DatabaseRef
    sources: dict[str, FolderSource]
    store: Any = None
    lock: Any = None
    watchers: list[FolderWatcher] = field(default_factory=list)
    tasks: list[asyncio.Task] = field(default_factory=list)
    accepting: bool = True
    reconciling: bool = False  # no job is claimed meanwhile (see haiku.ingester.versions)
    inflight: int = 0
    known_version: int | None = None  # the documents table's version the ingester's last commit left
    idle: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self.idle.set()

    async def attach(self, store: Any) -> None:
        """Take the opened store: its latest version is known (read before the first reconcile), and its
        commits are told to ``own_commits``."""
        self.store = store
        self.known_version = await self.latest_version()
        store.tell_commits(self.own_commits)

    def own_commits(self, commits: Mapping[str, tuple[int, int]]) -> None:
        """The store committed (a job's write, auto-maintenance, removing orphans): ``{table: (before, after)}``.

        Called under the writer lock, so the version watch (which skips a
        database while its lock is held) never sees the commits first.
        ``before`` is the version read fresh when the lock was taken: only
        when it is the version known are the commits on top of it the
        ingester's own. One on top of another process's commit leaves the
        version known where it was, so that commit is still to reconcile
        (docs/ingester.md, "While serve runs").
        """
        from haiku.core.store.schema import DOCUMENTS

        if DOCUMENTS in commits and commits[DOCUMENTS][0] == self.known_version:
            self.known_version = commits[DOCUMENTS][1]

    async def latest_version(self) -> int:
        """The latest committed version of the database's documents table, read through a fresh handle."""
        from haiku.core.store.schema import DOCUMENTS

        table = await self.store.connection.open_table(DOCUMENTS)
        try:
            await table.checkout_latest()  # a handle opened on the connection may follow others' commits late
            return await table.version()
        finally:
            with contextlib.suppress(Exception):
                table.close()

    def job_started(self) -> None:
        self.inflight += 1
        self.idle.clear()

    def job_finished(self) -> None:
        self.inflight -= 1
        if self.inflight <= 0:
            self.inflight = 0
            self.idle.set()


class IngesterApp:
    def __init__(
        self,
        config: AppConfig,
        database_name: str | None = None,
        config_path: str | Path | None = None,
        *,
        metrics: IngesterMetrics | None = None,
    ) -> None:
        if database_name is not None and config_path is not None:
            raise ValueError(
                "database_name runs one database once (run-batch); config_path serves and reloads them all; "
                "pass one of them"
            )
        self.config = config
        self.database_name = database_name
        self.config_path = Path(config_path) if config_path is not None else None
        self.databases: dict[str, DatabaseRuntime] = {}
        self.queue: IngestQueue | None = None
        self.engine: Engine | None = None  # convert a file, embed texts: local or on a Ray cluster
        self.batcher: EmbedBatcher | None = None
        self.processor: JobProcessor | None = None
        self.started_at = time.time()
        # What the pipeline did, for /metrics (serve) and --metrics-file (run-batch): docs/operations.md.
        self.metrics = metrics or IngesterMetrics(engine=config.ingester.engine.type, process=False)
        self.wake = asyncio.Event()
        self.log = get_logger()
        self._warm_task: asyncio.Task | None = None
        # serve and run-batch warn of a database processed with other settings; reprocess is the remedy
        self.warns_processing = True
        # The command that runs this app, named to a second owner its database locks refuse.
        self.command = "run-batch"

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
        }

    # --- lifecycle ---------------------------------------------------------------
    async def start(self, *, require_databases: bool = False) -> None:
        check_engine(self.config)
        check_picture_model(self.config)  # before any database is created (docs/pictures.md)
        names = self.selected_names()
        if not names and require_databases:
            raise NothingToIngestError(
                "ingester.databases names no database, so there is nothing to ingest; "
                "add a database with its sources under ingester.databases"
            )
        refs = ingested_refs(self.config, names)
        try:
            for name in names:
                await self._lock_database(name, refs[name])
            self.queue = IngestQueue(self.config.queue_path)
            await self._open_stores(names)
            check_distinct_locations({n: self.databases[n].ref for n in names})
            removed = self.queue.jobs.delete_live_jobs_of_unconfigured(self.source_ids())
            if removed:
                self.log.info("dropped jobs of sources no longer configured", jobs=removed)
            released = self.queue.jobs.release_claims(names, count_attempt=True)
            if released:
                self.log.warning("requeued jobs a previous run left claimed", jobs=released)
            for name in names:
                await self._reconcile(self.databases[name])
            self._build_pipeline()
        except BaseException:
            await self.close()
            raise

    def _build_pipeline(self) -> None:
        self.engine = build_engine(self.config, starving=lambda: self.batcher is not None and self.batcher.starving())
        embedder = self.engine.embedder
        self.batcher = EmbedBatcher(embedder, pool_size=4 * embedder.batch_size, observe=self.metrics.embedded)
        self.batcher.start()
        assert self.queue is not None
        self.processor = JobProcessor(
            sync=self.queue.sync,
            pool=self.engine.converter,
            batcher=self.batcher,
            describer=picture_describer(self.config),
            metrics=self.metrics,
        )

    def warm_up(self) -> None:
        """Start the conversion workers and load the model, in the background, once.

        Called when the first job is claimed (or at once by ``serve``): a batch
        with nothing to do never pays for docling and torch.
        """
        if self._warm_task is None:
            self._warm_task = asyncio.create_task(self._warm(), name="warm-up")

    async def _warm(self) -> None:
        assert self.engine is not None
        await self.engine.converter.start()
        load = getattr(self.engine.embedder, "prepare_document_encoder", None)
        if load is not None:
            try:
                await asyncio.to_thread(load)
            except Exception as exc:  # reported again by the first job that embeds
                self.log.error("the embedding model did not load", error=str(exc))

    @property
    def warm(self) -> bool:
        """The conversion workers are started and the model loading has ended."""
        return self._warm_task is not None and self._warm_task.done()

    async def ready(self) -> None:
        if self._warm_task is not None:
            await asyncio.shield(self._warm_task)

    async def _lock_database(self, name: str, ref: DatabaseRef) -> None:
        from haiku.core.store import OwnershipLock

        lock = OwnershipLock(ref, "ingester", holder=f"haiku-ingester {self.command}")
        await lock.acquire()
        sources = sources_of(self.config, name)
        self.databases[name] = DatabaseRuntime(name=name, ref=ref, sources=sources, lock=lock)

    async def _open_stores(self, names: list[str]) -> None:
        from haiku.core.store import Store

        async def open_one(name: str) -> None:
            runtime = self.databases[name]
            await runtime.attach(await Store.open(runtime.ref, self.config, create=True))
            self.log.info("database open", database=name, documents=await runtime.store.reads.count_documents())
            assert self.queue is not None
            await check_processing(
                name, runtime.store, self.queue, processing_identity(self.config), warn=self.warns_processing
            )

        results = await asyncio.gather(*(open_one(n) for n in names), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        assert self.queue is not None
        self.queue.totals.start(names)  # status counts what this run writes

    async def reconcile(self, runtime: DatabaseRuntime) -> None:
        """Bring the sync state of one open database back into agreement with what it holds."""
        await self._reconcile(runtime)

    async def _reconcile(self, runtime: DatabaseRuntime) -> None:
        assert self.queue is not None
        report = await reconcile(runtime.name, runtime.store, self.queue.sync, set(runtime.sources))
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
            await self._open_stores([name])
            await self._reconcile(self.databases[name])
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
        await self.stop_discovery(runtime)
        await runtime.idle.wait()
        assert self.queue is not None
        self.queue.jobs.delete_live_jobs(name)
        self.queue.sync.forget_database(name)
        del self.databases[name]
        await self._close_runtime(runtime)

    async def stop_discovery(self, runtime: DatabaseRuntime) -> None:
        for watcher in runtime.watchers:
            await asyncio.to_thread(watcher.stop)
        runtime.watchers.clear()
        tasks, runtime.tasks = runtime.tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task

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
        if runtime is None or not runtime.accepting or self.queue is None:
            return
        items: list[tuple[str, Any, str | None]] = []
        for change in changes:
            if change.kind == "delete_tree":
                prefix = change.uri.rstrip("/") + "/"
                known = self.queue.sync.known(source.database, source.id)
                items += [(uri, "delete", None) for uri in known if uri.startswith(prefix)]
            elif change.kind == "skip":
                if change.skip is not None:
                    self.metrics.file_skipped(source.database, source.id, change.uri, change.skip)
                # A file now skipped (emptied, grown over the limit): only a known one has a document to delete.
                if self.queue.sync.get(source.database, source.id, change.uri) is not None:
                    items.append((change.uri, "delete", None))
            else:
                items.append((change.uri, change.kind, change.revision))
        if not items:
            return
        counts = self.queue.jobs.enqueue_many(source.database, source.id, items)
        self.log.info(
            "changes seen",
            database=source.database,
            source=source.id,
            upserts=sum(1 for i in items if i[1] == "upsert"),
            deletes=sum(1 for i in items if i[1] == "delete"),
            new_jobs=counts.get("inserted", 0),
        )
        self.wake.set()

    def serving_names(self) -> list[str]:
        """The databases whose jobs are claimed now: accepting, and not being reconciled."""
        return [name for name, runtime in self.databases.items() if runtime.accepting and not runtime.reconciling]

    # --- closing -------------------------------------------------------------------
    async def close(self) -> None:
        for runtime in list(self.databases.values()):
            await self.stop_discovery(runtime)
        if self._warm_task is not None:
            self._warm_task.cancel()
            with contextlib.suppress(BaseException):
                await self._warm_task
        if self.batcher is not None:
            await self.batcher.close()
        if self.processor is not None:
            await self.processor.close()
        if self.engine is not None:
            await self.engine.close()
        # Together: each database's maintenance on close is bounded in time, so the stop is too (docs/ingester.md).
        await asyncio.gather(*(self._close_runtime(runtime) for runtime in list(self.databases.values())))
        self.databases.clear()
        if self.queue is not None:
            self.queue.close()
            self.queue = None
