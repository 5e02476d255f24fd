"""Which process drives a configuration's queue now, for ``status``.

``serve`` and ``run-batch`` hold an exclusive lock on a small file beside the
queue for as long as they run, and write into it their command, PID and start
time. ``status`` learns whether one is running from the lock, not from the
file's text: a process that died left its text behind, but its lock went with
it. One process drives a queue at a time (each ingested database has one
owner), so one record per queue suffices.
"""

from __future__ import annotations

import fcntl
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


def owner_path(queue_path: Path) -> Path:
    return queue_path.with_name(queue_path.name + ".owner")


class OwnerRecord:
    """Held by a running ``serve`` or ``run-batch``; ``release`` (or exit) ends it."""

    def __init__(self, fd: int, record: dict[str, Any]) -> None:
        self._fd: int | None = fd
        self._record = record
        self._write()

    @classmethod
    def take(cls, queue_path: Path, command: str, processing: dict[str, Any] | None = None) -> OwnerRecord | None:
        """The record, or ``None`` when another process holds it (the database locks then refuse).

        ``processing`` is what the process ingests with (``haiku.ingester.processing.running_settings``),
        so ``status`` can tell when the configuration file says otherwise.
        """
        path = owner_path(queue_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)  # never truncated before the lock is ours
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return None
        since = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        return cls(fd, {"command": command, "pid": os.getpid(), "since": since, "processing": processing})

    def note(self, **facts: Any) -> None:
        """Add ``facts`` to the record (e.g. ``encoder``: where documents are embedded)."""
        self._record.update(facts)
        self._write()

    def _write(self) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            os.pwrite(self._fd, json.dumps(self._record).encode(), 0)

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.ftruncate(fd, 0)
            os.close(fd)


def read_owner(queue_path: Path) -> dict[str, Any] | None:
    """``{"command", "pid", "since", "encoder"}`` of the process holding the record now, else ``None``.

    ``encoder`` (device, precision, runtime) is ``None`` until the process has
    loaded its document encoder."""
    try:
        fd = os.open(owner_path(queue_path), os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:  # held: someone is running
            text = os.pread(fd, 65536, 0).decode("utf-8", "replace")
            try:
                record = json.loads(text)
            except ValueError:  # caught between its truncate and its write
                record = {}
            return {key: record.get(key) for key in ("command", "pid", "since", "processing", "encoder")}
        return None
    finally:
        os.close(fd)
