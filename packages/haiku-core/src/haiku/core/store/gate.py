"""The write discipline every write of a store goes through (docs/storage.md, "The writer lock").

``WriteGate.writing(action)`` refuses read-only and tagged stores, takes the
writer lock (re-entrant for the task holding it), and brings every table
handle to the latest version first, so decisions made under the lock (which
chunks are orphans, which document a uri names) never rest on a view older
than another process's last write. ``written()`` is called once a write has
committed and released the lock: it marks the store as written since its last
maintenance and tells whoever listens (the auto-maintenance, see ``maintenance``).

Every commit, whatever made it (a write, a step of auto-maintenance, a
vacuum, a rebuild, a tag restore), is made under an outermost ``writing``,
so that is where the commits are told (``on_commits``): before the lock is
released, each table whose version moved, with the version read fresh when
the lock was taken and the version its handle holds after this holder's own
commits. The lock is every writer's, in every process, so nothing between
the two is anyone else's (docs/ingester.md, "While serve runs").
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager

from haiku.core.errors import ReadOnlyError
from haiku.core.logs import get_logger
from haiku.core.store.handles import Handles
from haiku.core.store.locks import WriterLock

log = get_logger("haiku.core.store")

# Per table whose version moved under one hold of the writer lock: (version before, version after).
Commits = Mapping[str, tuple[int, int]]


class WriteGate:
    """Who may write, under which lock, and what happens once a write committed."""

    def __init__(self, handles: Handles, lock: WriterLock) -> None:
        self.handles = handles
        self.lock = lock
        self.dirty = False  # written since the last vacuum
        self.on_written: Callable[[], None] | None = None
        # Told of the commits of each hold of the writer lock, before it is released (see the module docstring).
        self.on_commits: list[Callable[[Commits], None]] = []

    def require_writable(self, action: str) -> None:
        handles = self.handles
        handles.require_open()
        if handles.tag is not None:
            raise ReadOnlyError(
                f"{handles.label} is read at tag '{handles.tag}', which is read-only; "
                f"{action} needs the live database"
            )
        if handles.read_only:
            raise ReadOnlyError(f"{handles.label} is open read-only; {action} needs a writable store")

    @asynccontextmanager
    async def writing(self, action: str, *, timeout_s: float | None = None) -> AsyncIterator[None]:
        self.require_writable(action)
        outermost = not self.lock.held_by_current_task()
        async with self.lock.hold(action, timeout_s):
            if not outermost:
                yield
                return
            await self.handles.refresh_to_latest()
            before = await self.handles.versions()
            try:
                yield
            finally:
                await self._tell_commits(before)

    async def _tell_commits(self, before: Mapping[str, int]) -> None:
        if not self.on_commits:
            return
        try:
            after = await self.handles.versions()
        except Exception as exc:  # untold, a commit counts as another process's: its listeners look again
            log.warning("store.versions_unread", database=self.handles.name, error=f"{type(exc).__name__}: {exc}")
            return
        commits = {name: (version, after[name]) for name, version in before.items()
                   if name in after and after[name] != version}
        for listener in self.on_commits if commits else ():
            try:
                listener(commits)
            except Exception as exc:  # a listener never fails the write that committed
                log.warning("store.commit_listener_failed", database=self.handles.name,
                            error=f"{type(exc).__name__}: {exc}")

    def written(self) -> None:
        """Called once a write committed and released the lock."""
        self.dirty = True
        if self.on_written is not None:
            self.on_written()
