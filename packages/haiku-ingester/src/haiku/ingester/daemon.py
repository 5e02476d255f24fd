"""``serve``: the long-running daemon (docs/ingester.md).

Start: the port of the HTTP endpoint bound (``ingester.http``, docs/operations.md),
refusals, ownership locks, databases open (created when missing), reconcile,
conversion workers and model warming, watchers and sweeps, then ``READY=1``,
then the endpoint serves. While it runs, a database another process changed is
reconciled again (``versions``). SIGHUP reloads (serialized), SIGTERM/SIGINT
stop: ``STOPPING=1`` is sent first, the endpoint stops, discovery stops,
in-flight jobs get ``shutdown_grace_s`` to finish, the rest give their claims back.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING

from haiku.core.config import AppConfig, load_config
from haiku.core.processing_identity import processing_identity
from haiku.ingester.app import IngesterApp
from haiku.ingester.discovery import start_discovery
from haiku.ingester.errors import ReloadRefusedError
from haiku.ingester.logs import get_logger
from haiku.ingester.metrics import IngesterMetrics
from haiku.ingester.notify import SystemdNotifier
from haiku.ingester.owner import OwnerRecord
from haiku.ingester.processing import running_settings
from haiku.ingester.reload import plan_reload
from haiku.ingester.runner import stop_on_signals, stop_workers, worker_pool
from haiku.ingester.versions import VersionWatch
from haiku.ingester.workers import WorkerPool

if TYPE_CHECKING:
    from haiku.ingester.http.server import HttpEndpoint

RETENTION_INTERVAL_S = 3600.0
MEMORY_LOG_INTERVAL_S = 60.0  # a debug line with the daemon's memory (bench/soak.py reads it)


class Daemon:
    def __init__(self, config: AppConfig, config_path: Path | None, notifier: SystemdNotifier | None = None) -> None:
        self.config = config
        self.config_path = config_path
        self.notifier = notifier or SystemdNotifier()
        self.metrics = IngesterMetrics(engine=config.ingester.engine.type)
        self.app = IngesterApp(config, config_path=config_path, metrics=self.metrics, command="serve")
        self.started_at = time.time()
        self.stop = asyncio.Event()
        self._started = asyncio.Event()  # a SIGHUP during start waits for it
        self._reload_lock = asyncio.Lock()
        self._reload_tasks: set[asyncio.Task] = set()
        self.log = get_logger()

    # --- signals ----------------------------------------------------------------------
    def _request_reload(self) -> None:
        task = asyncio.create_task(self.reload(), name="reload")
        self._reload_tasks.add(task)
        task.add_done_callback(self._reload_tasks.discard)

    # --- running -------------------------------------------------------------------------
    async def run(self) -> int:
        """Serve until SIGTERM or SIGINT; SIGHUP reloads."""
        loop = asyncio.get_running_loop()
        with stop_on_signals(self.stop, announce=True):
            loop.add_signal_handler(signal.SIGHUP, self._request_reload)
            try:
                return await self._run()
            finally:
                loop.remove_signal_handler(signal.SIGHUP)

    async def _run(self) -> int:
        app = self.app
        endpoint = self._bind_endpoint()
        try:
            await app.start()
        except BaseException:
            if endpoint is not None:
                endpoint.close()
            raise
        # for `status`: who runs, and the processing settings it keeps until restarted
        owner = OwnerRecord.take(
            app.config.queue_path, "serve", running_settings(processing_identity(app.config))
        )
        if not app.databases:
            self.log.warning("ingester.databases names no database; idling until a reload adds one")
        if app.databases:
            app.warm_up()
        workers = worker_pool(app)
        background = [
            asyncio.create_task(workers.heartbeat_forever(), name="heartbeat"),
            asyncio.create_task(workers.reap_forever(), name="reaper"),
            asyncio.create_task(self._prune_forever(), name="retention"),
            asyncio.create_task(VersionWatch(app).forever(), name="version-watch"),
            asyncio.create_task(self._memory_forever(), name="memory-log"),
        ]
        if owner is not None:
            background.append(asyncio.create_task(self._note_encoder(owner), name="note-encoder"))
        interval = self.notifier.watchdog_interval_s
        if interval:
            background.append(asyncio.create_task(self._watchdog_forever(interval), name="watchdog"))
        for runtime in app.databases.values():
            start_discovery(app, runtime)
        claim_loop = asyncio.create_task(workers.run(self.stop), name="claim-loop")
        claim_loop.add_done_callback(lambda _: self.stop.set())  # it ends early only on a full disk
        self._started.set()
        self.notifier.ready(status=f"serving {len(app.databases)} database(s)")
        self.log.info("ready", databases=list(app.databases), queue=str(app.config.queue_path))
        try:
            if endpoint is not None:
                await self._serve_endpoint(endpoint, workers, claim_loop)
            await self.stop.wait()
        finally:
            self.notifier.stopping()
            if endpoint is not None:
                await endpoint.stop()
            for task in list(self._reload_tasks):
                task.cancel()
            for runtime in list(app.databases.values()):
                runtime.accepting = False
                await runtime.stop_discovery()
            await claim_loop
            released = await stop_workers(workers, app.config)
            if released:
                self.log.warning("released unfinished jobs to the queue", jobs=released)
            for task in background:
                task.cancel()
            for task in background:
                with contextlib.suppress(BaseException):
                    await task
            await app.close()
            if owner is not None:
                owner.release()
            self.log.info(
                "stopped", succeeded=workers.tally.total.succeeded, dead=workers.tally.total.dead,
                retried=workers.tally.total.retried, released=released
            )
        if workers.fatal is not None:
            raise workers.fatal
        return 0

    # --- the HTTP endpoint (docs/operations.md) ---------------------------------------
    def _bind_endpoint(self) -> HttpEndpoint | None:
        """Bind ``ingester.http``'s port first: a taken port fails the start before anything is opened."""
        settings = self.config.ingester.http
        if not settings.enabled:
            return None
        from haiku.ingester.http.server import HttpEndpoint

        endpoint = HttpEndpoint(settings)
        endpoint.bind()
        return endpoint

    async def _serve_endpoint(self, endpoint: HttpEndpoint, workers: WorkerPool, claim_loop: asyncio.Task) -> None:
        from haiku.ingester.http.routes import DaemonView, routes

        app = self.app

        def workers_problem() -> str | None:
            if claim_loop.done() or workers.fatal is not None:
                return "stopped"
            if app.databases and not app.warm:
                return "starting (conversion workers and the embedding model)"
            return None

        view = DaemonView(app, self.metrics, workers_problem, self.started_at)
        await endpoint.start(routes(view))

    async def _note_encoder(self, owner: OwnerRecord) -> None:
        """Tell ``status`` where documents are embedded, once the encoder says (after its first load or batch)."""
        describe = getattr(self.app.pipeline.engine.embedder, "describe_placement", None)
        while True:
            placement = describe() if describe is not None else None
            if placement is not None:
                owner.note(encoder=placement)
                return
            await asyncio.sleep(1.0)

    async def _prune_forever(self) -> None:
        queue = self.app.pipeline.queue
        while True:
            pruned = queue.jobs.prune(self.app.config.ingester.queue.retention_days)
            if pruned:
                self.log.info("pruned finished jobs", jobs=pruned)
            await asyncio.sleep(RETENTION_INTERVAL_S)

    async def _memory_forever(self) -> None:
        """Log, at debug level, resident memory and what LanceDB's bounded caches hold (docs/storage.md)."""
        from haiku.core.lance_session import MIB, lance_session
        from haiku.core.memory import resident_mib

        queue = self.app.pipeline.queue
        while True:
            await asyncio.sleep(MEMORY_LOG_INTERVAL_S)
            session = lance_session(self.app.config)
            self.log.debug(
                "memory",
                rss_mib=resident_mib(),
                lance_cache_mib=round(session.size_bytes / MIB, 1),
                lance_cache_entries=session.approx_num_items,
                queued=queue.jobs.live_count(list(self.app.databases)),
            )

    async def _watchdog_forever(self, interval: float) -> None:
        while True:
            self.notifier.watchdog()
            await asyncio.sleep(interval)

    # --- reload --------------------------------------------------------------------------
    async def reload(self) -> str:
        """Apply a changed configuration; returns the outcome (applied, partial, failed, refused)."""
        await self._started.wait()
        async with self._reload_lock:
            if self.stop.is_set():
                return "refused"
            self.notifier.reloading()
            try:
                return await self._reload()
            finally:
                self.notifier.ready()

    async def _reload(self) -> str:
        app = self.app
        try:
            new = await asyncio.to_thread(load_config, self.config_path)
            plan = plan_reload(app.config, new, list(app.databases))
            new_app_probe = IngesterApp(new)
            new_app_probe.selected_names()  # duplicate sources, shared locations
        except (ReloadRefusedError, ValueError, KeyError, OSError) as exc:
            kind = "refused" if isinstance(exc, ReloadRefusedError) else "failed"
            self.log.error("reload " + kind, error=str(exc), error_type=type(exc).__name__, outcome=kind)
            return kind
        except Exception as exc:  # an unexpected reload bug must not stop serving
            self.log.error("reload failed", error=str(exc), error_type=type(exc).__name__, outcome="failed")
            return "failed"
        if plan.unused:
            self.log.info("reload: taken as is, the ingester does not use them", changed=plan.unused)
        if plan.http_changed:
            self.log.warning(
                "reload: ingester.http changed; the endpoint keeps its settings until haiku-ingester restarts",
                changed=["ingester.http"],
            )
            new.ingester.http = app.config.ingester.http
        if plan.empty:
            app.config = new
            self.log.info("reload applied: nothing changed", outcome="applied")
            return "applied"
        results: dict[str, str] = {}
        errors: dict[str, str] = {}
        for name in plan.removed:
            await app.remove_database(name)
            results[name] = "removed"
        app.config = new
        for name in plan.added:
            try:
                runtime = await app.add_database(name)
            except Exception as exc:
                results[name] = "failed"
                errors[name] = str(exc)
                continue
            start_discovery(app, runtime)
            results[name] = "added" if results.get(name) != "removed" else "re-added"
        failed = [n for n, r in results.items() if r == "failed"]
        outcome = "applied" if not failed else ("failed" if len(failed) == len(results) else "partial")
        log = self.log.error if failed else self.log.info
        log("reload " + outcome, outcome=outcome, databases=results, errors=errors or None)
        app.wake.set()
        return outcome
