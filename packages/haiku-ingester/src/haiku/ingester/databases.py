"""One ingested database while the ingester runs: its store, lock, sources and discovery (docs/ingester.md)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from haiku.core.scope import DatabaseRef
from haiku.ingester.manual.source import MANUAL_SOURCE_ID, ManualSource
from haiku.ingester.sources.fs import FolderSource
from haiku.ingester.sources.watching import FolderWatcher


@dataclass
class DatabaseRuntime:
    """One ingested database while the app runs."""

    name: str
    ref: DatabaseRef
    sources: dict[str, FolderSource]
    manual: ManualSource | None = None  # the documents added by hand (haiku.ingester.manual)
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

    async def stop_discovery(self) -> None:
        """Stop its watchers, then its sweep and root-following tasks."""
        for watcher in self.watchers:
            await asyncio.to_thread(watcher.stop)
        self.watchers.clear()
        tasks, self.tasks = self.tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task

    def source_for(self, source_id: str) -> Any:
        """The configured source of this id, the ``manual`` one, or None."""
        if source_id == MANUAL_SOURCE_ID and self.manual is not None:
            return self.manual
        return self.sources.get(source_id)

    def job_started(self) -> None:
        self.inflight += 1
        self.idle.clear()

    def job_finished(self) -> None:
        self.inflight -= 1
        if self.inflight <= 0:
            self.inflight = 0
            self.idle.set()


def serving_names(databases: Mapping[str, DatabaseRuntime]) -> list[str]:
    """The databases whose jobs are claimed now: accepting, and not being reconciled."""
    return [name for name, runtime in databases.items() if runtime.accepting and not runtime.reconciling]
