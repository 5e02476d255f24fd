"""Watching a folder source with watchdog (docs/ingester.md).

Events arrive on watchdog's thread and are handed to the event loop. They are
debounced per path and then judged by what the filesystem holds at that moment,
not by the event's kind: a path that is a wanted file becomes an upsert, a path
that is gone becomes a delete, a folder that appeared (created or moved in) is
listed so files created before its watch existed are not missed, and a folder
that vanished deletes what was known under it. Periodic sweeps catch the rest.

A watch follows the root folder it was started on (its inode), not its name: a
root swapped or moved away (``mv docs docs.old && mv docs.new docs``) leaves it
on the old folder. So the watcher remembers the root's identity (device and
inode) and judges no event once the root's name holds another folder, or none:
what happens in the moved-away folder deletes nothing. ``root_state`` tells
discovery, which starts a new watch on the new root and sweeps it.
"""

from __future__ import annotations

import asyncio
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from haiku.ingester.skips import SkipReason
from haiku.ingester.sources.fs import FileEntry, FolderSource

ChangeKind = Literal["upsert", "delete", "delete_tree", "skip"]  # skip: a file now skipped (empty, …)
RootState = Literal["same", "replaced", "vanished"]


def root_identity(root: Path) -> tuple[int, int] | None:
    """``(device, inode)`` of a root folder, or None when its name holds no folder."""
    try:
        st = os.stat(root)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None


@dataclass(frozen=True)
class Change:
    kind: ChangeKind
    path: Path
    uri: str
    revision: str | None = None
    skip: SkipReason | None = None  # why, for a "skip"


class _Handler:
    """A watchdog handler forwarding raw paths to the loop (duck-typed: only ``dispatch``)."""

    def __init__(self, note: Callable[[str, bool], None]) -> None:
        self._note = note

    def dispatch(self, event) -> None:  # watchdog calls this on its thread
        kind = event.event_type
        if kind in ("opened", "closed_no_write", "attrib"):
            return
        if event.is_directory and kind == "modified":
            return  # a directory's own mtime: its files report for themselves
        if kind == "moved":
            self._note(os.fsdecode(event.src_path), event.is_directory)
            self._note(os.fsdecode(event.dest_path), event.is_directory)
        else:
            self._note(os.fsdecode(event.src_path), event.is_directory)


class FolderWatcher:
    def __init__(
        self,
        source: FolderSource,
        on_changes: Callable[[list[Change]], None],
        *,
        loop: asyncio.AbstractEventLoop,
        debounce_s: float = 0.3,
        max_delay_s: float = 2.0,
    ) -> None:
        self.source = source
        self._on_changes = on_changes
        self._loop = loop
        self._debounce_s = debounce_s
        self._max_delay_s = max_delay_s
        self._pending: dict[str, bool] = {}
        self._first_pending_at: float | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._observer = None
        self.identity: tuple[int, int] | None = None  # the root folder the watch is on

    def start(self) -> None:
        from watchdog.observers import Observer

        self.identity = root_identity(self.source.root)
        if self.identity is None:
            raise FileNotFoundError(f"the root {self.source.root} is not a folder")
        observer = Observer()
        observer.schedule(_Handler(self._from_thread), str(self.source.root), recursive=True)  # type: ignore[arg-type]
        observer.daemon = True
        observer.start()
        self._observer = observer

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()
            observer.join(timeout=5)

    @property
    def running(self) -> bool:
        return self._observer is not None

    def root_state(self) -> RootState:
        """Whether the root's name still holds the folder this watch is on."""
        now = root_identity(self.source.root)
        if now is None:
            return "vanished"
        return "same" if now == self.identity else "replaced"

    def _from_thread(self, path: str, is_dir: bool) -> None:
        try:
            self._loop.call_soon_threadsafe(self._note, path, is_dir)
        except RuntimeError:
            pass  # the loop closed while watchdog was still delivering

    def _note(self, path: str, is_dir: bool) -> None:
        self._pending[path] = self._pending.get(path, False) or is_dir
        now = time.monotonic()
        if self._first_pending_at is None:
            self._first_pending_at = now
        if self._timer is not None:
            self._timer.cancel()
        # Quiet for debounce_s, but never later than max_delay_s after the first event.
        delay = min(self._debounce_s, max(self._first_pending_at + self._max_delay_s - now, 0.0))
        self._timer = self._loop.call_later(delay, self._flush)

    def _flush(self) -> None:
        self._timer = None
        self._first_pending_at = None
        pending, self._pending = self._pending, {}
        if self.root_state() != "same":
            return  # events of a folder moved away, or of a vanished root: discovery re-arms and sweeps
        changes: list[Change] = []
        for raw, was_dir in pending.items():
            changes.extend(self._judge(Path(raw), was_dir))
        if changes:
            self._on_changes(changes)

    def _judge(self, path: Path, was_dir: bool) -> list[Change]:
        source = self.source
        rel = source.relative(path)
        if rel is None:
            return []
        if path.is_dir() and not path.is_symlink():
            return [
                Change("upsert", entry.path, entry.uri, entry.revision) for entry in source.list_under(path).values()
            ]
        if os.path.lexists(path):
            judged = source.judge(path) if source.wants(path) else None
            if isinstance(judged, SkipReason):
                return [Change("skip", path, source.uri_for(path), skip=judged)]  # its document, if any, goes
            if isinstance(judged, FileEntry):
                return [Change("upsert", judged.path, judged.uri, judged.revision)]
            return []
        if rel == ".":
            return []  # the root itself: never a delete of everything (the sweep's guard decides)
        if was_dir:
            return [Change("delete_tree", path, source.uri_for(path))]
        if source.wants(path):
            return [Change("delete", path, source.uri_for(path))]
        return []
