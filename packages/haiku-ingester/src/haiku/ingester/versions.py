"""Noticing a database changed under the running ingester, and reconciling it (docs/ingester.md).

``serve`` owns its databases, but other commands may still commit to them:
``haiku-rag tag restore --force`` puts back documents whose files are gone
(or removes ones whose files exist), ``vacuum`` compacts, ``create-index``
indexes. The ingester's sync state then no longer says what the database
holds, and until a restart a deleted file's document stayed searchable.

The store tells the ingester of every commit it makes (a job's write, a
step of auto-maintenance, removing orphan chunks), under the writer lock,
with the version of the documents table read fresh when the lock was taken
and the version it left (``Store.tell_commits``). Only commits on top of the
version known move it on: a write that waited for another process's commit
and went on top of it leaves that commit to reconcile. Every
``VERSION_CHECK_INTERVAL_S`` the daemon reads the latest version of each
database with no job in flight and its writer lock free: one that is not the
version known was made by someone else, and the database is reconciled as at
start (sync state rebuilt from what it holds, orphan chunks removed) and each
of its sources swept at once, so the difference (a restored document whose
file is gone, a file whose document went, an older revision) becomes jobs.
No job of that database is claimed meanwhile; watcher events are still
queued.
"""

from __future__ import annotations

import asyncio
import contextlib

from haiku.core.store.schema import DOCUMENTS
from haiku.ingester.app import IngesterApp
from haiku.ingester.databases import DatabaseRuntime
from haiku.ingester.discovery import sweep_once
from haiku.ingester.errors import SweepError
from haiku.ingester.logs import get_logger

VERSION_CHECK_INTERVAL_S = 5.0


class VersionWatch:
    """Reconciles each served database whose latest version is not the one the ingester left."""

    def __init__(self, app: IngesterApp) -> None:
        self.app = app
        self.log = get_logger()

    async def check(self) -> list[str]:
        """Look at every served database once; returns the names reconciled."""
        reconciled = []
        for runtime in list(self.app.databases.values()):
            if runtime.store is None or not runtime.accepting or runtime.inflight or runtime.store.gate.lock.held:
                continue  # a write or a maintenance step of its own is under way: look next time
            try:
                if await self._check_one(runtime):
                    reconciled.append(runtime.name)
            except Exception as exc:  # an unreadable database is reported by its jobs; keep watching
                self.log.warning("could not read the database's version", database=runtime.name, error=str(exc))
        return reconciled

    async def _check_one(self, runtime: DatabaseRuntime) -> bool:
        version = await runtime.latest_version()
        if runtime.inflight or runtime.store.gate.lock.held:
            return False  # a commit of its own may have come meanwhile: look next time
        if version == runtime.known_version:
            return False
        self.log.warning(
            "the database changed outside the ingester; reconciling it with its sources",
            database=runtime.name, version_before=runtime.known_version, version_now=version,
        )
        await self.reconcile(runtime)
        return True

    async def reconcile(self, runtime: DatabaseRuntime) -> None:
        runtime.reconciling = True
        try:
            await runtime.idle.wait()
            # Under the writer lock the store's handles are at the latest version (without it they follow
            # another process's commit only after lancedb.read_consistency_interval_seconds), so the
            # reconcile reads what the other process left, that version is the one known, and the
            # reconcile's own commits (removing orphan chunks) are told on top of it.
            async with runtime.store.writer_lock("reconciling the database with its sources"):
                runtime.known_version = await runtime.store.table(DOCUMENTS).version()
                await self.app.reconcile(runtime)
            for source in runtime.sources.values():
                with contextlib.suppress(SweepError):  # logged; the periodic sweep tries again
                    await sweep_once(self.app, source)
        finally:
            runtime.reconciling = False
            self.app.wake.set()

    async def forever(self, interval: float = VERSION_CHECK_INTERVAL_S) -> None:
        while True:
            await asyncio.sleep(interval)
            await self.check()
