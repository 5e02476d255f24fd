"""The write discipline every write of a store goes through (docs/storage.md, "The writer lock").

``WriteGate.writing(action)`` refuses read-only and tagged stores, takes the
writer lock (re-entrant for the task holding it), and brings every table
handle to the latest version first, so decisions made under the lock (which
chunks are orphans, which document a uri names) never rest on a view older
than another process's last write. ``written()`` is called once a write has
committed and released the lock: it marks the store as written since its last
maintenance and tells whoever listens (the auto-maintenance, see ``maintenance``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from haiku.core.errors import ReadOnlyError
from haiku.core.store.handles import Handles
from haiku.core.store.locks import WriterLock


class WriteGate:
    """Who may write, under which lock, and what happens once a write committed."""

    def __init__(self, handles: Handles, lock: WriterLock) -> None:
        self.handles = handles
        self.lock = lock
        self.dirty = False  # written since the last vacuum
        self.on_written: Callable[[], None] | None = None

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
            if outermost:
                await self.handles.refresh_to_latest()
            yield

    def written(self) -> None:
        """Called once a write committed and released the lock."""
        self.dirty = True
        if self.on_written is not None:
            self.on_written()
