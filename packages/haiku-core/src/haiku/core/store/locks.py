"""Locks that keep one writer per database (docs/storage.md, "The writer lock"; docs/ingester.md).

Two kinds, both failing with ``DatabaseLockedError`` naming the database:

* ``WriterLock``: held for the duration of every write. For a local database
  it is an advisory file lock (``.haiku-writer.lock`` in the database
  directory), so it works across processes; for object storage it is
  in-process only, and "one writer per database" is a deployment rule.
  Within a process a per-location lock serialises stores opened separately
  on one database, and a task already holding the lock may take it again.
* ``OwnershipLock``: a named, long-lived lock an ingester holds for its whole
  lifetime (``OwnershipLock(ref, "ingester")`` → ``.haiku-ingester.lock``),
  so a second ingester on the same database fails at start.

Acquisition polls without blocking the event loop and is cancellation safe:
a cancelled waiter never ends up holding a lock.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from haiku.core.errors import DatabaseLockedError, SourceUnavailableError, database_label
from haiku.core.logs import get_logger
from haiku.core.scope import DatabaseRef

if TYPE_CHECKING:
    from filelock import FileLock

log = get_logger(__name__)

WRITER_LOCK_FILE = ".haiku-writer.lock"
_POLL_S = 0.02

_registry_lock = threading.Lock()
_process_locks: dict[tuple[str, str], threading.Lock] = {}


def location_key(ref: DatabaseRef) -> str:
    """One string per database location: the resolved path, or the URI without a trailing slash."""
    if isinstance(ref.location, Path):
        return str(ref.location.expanduser().resolve())
    return ref.location.rstrip("/")


def _process_lock(key: str, name: str) -> threading.Lock:
    with _registry_lock:
        lock = _process_locks.get((key, name))
        if lock is None:
            lock = _process_locks[(key, name)] = threading.Lock()
        return lock


def _unwritable_location(ref: DatabaseRef, error: OSError) -> SourceUnavailableError:
    """The lock file cannot be made: say why without the path (a named database is named, never located)."""
    if error.errno in (errno.EEXIST, errno.ENOTDIR):
        why = "its location exists and is not a directory"
    elif error.errno == errno.EROFS:
        why = "its location is on a read-only file system"
    elif error.errno in (errno.EACCES, errno.EPERM):
        why = "its location is not writable (permission denied)"
    else:
        why = f"its location cannot be written ({error.strerror or type(error).__name__})"
    return SourceUnavailableError(f"{_database_label(ref)} cannot be written: {why}", database=ref.name)


def _database_label(ref: DatabaseRef) -> str:
    # A given path or the legacy unnamed database may show its location (docs/storage.md).
    return database_label(ref.name, unnamed=f"the database at {ref.location}")


async def _poll(try_acquire, deadline: float) -> bool:
    while True:
        if try_acquire():
            return True
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(min(_POLL_S, max(0.0, deadline - time.monotonic())))


def _file_try_acquire(lock: FileLock) -> bool:
    from filelock import Timeout

    try:
        lock.acquire(blocking=False)
    except Timeout:
        return False
    return True


class _ProcessAndFileLock:
    """An in-process lock per (location, name), plus a file lock for local databases."""

    def __init__(self, ref: DatabaseRef, name: str, filename: str) -> None:
        self.ref = ref
        self.key = location_key(ref)
        self._thread_lock = _process_lock(self.key, name)
        self._file_lock: FileLock | None = None
        self._filename = filename

    async def acquire(self, deadline: float) -> bool:
        if not await _poll(lambda: self._thread_lock.acquire(blocking=False), deadline):
            return False
        if not isinstance(self.ref.location, Path):
            return True
        if self._file_lock is None:  # made on first use: a reader never takes it
            from filelock import FileLock

            self._file_lock = FileLock(str(Path(self.key) / self._filename), thread_local=False, is_singleton=False)
        failure: OSError | None = None
        try:
            Path(self.key).mkdir(parents=True, exist_ok=True)
            acquired = await _poll(lambda: _file_try_acquire(self._file_lock), deadline)  # type: ignore[arg-type]
        except OSError as exc:
            self._thread_lock.release()
            failure = exc
        except BaseException:
            self._thread_lock.release()
            raise
        if failure is not None:
            # Raised outside the handler: the OSError names the location, which must not leave the name.
            raise _unwritable_location(self.ref, failure)
        if not acquired:
            self._thread_lock.release()
        return acquired

    def release(self) -> None:
        try:
            if self._file_lock is not None and self._file_lock.is_locked:
                self._file_lock.release()
        finally:
            self._thread_lock.release()


class WriterLock:
    """The writer lock of one open store (see the module docstring)."""

    def __init__(self, ref: DatabaseRef, timeout_s: float) -> None:
        self.ref = ref
        self.timeout_s = timeout_s
        self._inner = _ProcessAndFileLock(ref, "writer", WRITER_LOCK_FILE)
        self._task_lock: asyncio.Lock | None = None
        self._owner: asyncio.Task | None = None
        self._depth = 0

    @property
    def held(self) -> bool:
        return self._owner is not None

    @property
    def key(self) -> str:
        """The database location this lock guards (``location_key(ref)``)."""
        return self._inner.key

    def held_by_current_task(self) -> bool:
        """Whether the running task holds the lock, so a ``hold()`` now would re-enter it."""
        return self._owner is not None and self._owner is asyncio.current_task()

    def _locked_error(self, action: str, timeout: float) -> DatabaseLockedError:
        return DatabaseLockedError(
            f"{_database_label(self.ref)} is locked by another writer: its writer lock was not free "
            f"within {timeout:g}s (storage.writer_lock_timeout_s), so {action} did not run; "
            "try again when the other writer is done",
            database=self.ref.name,
        )

    @asynccontextmanager
    async def hold(self, action: str = "the write", timeout_s: float | None = None) -> AsyncIterator[None]:
        """Hold the lock for the block; re-entrant for the task that holds it."""
        task = asyncio.current_task()
        if task is not None and task is self._owner:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        timeout = self.timeout_s if timeout_s is None else timeout_s
        deadline = time.monotonic() + timeout
        if self._task_lock is None:
            self._task_lock = asyncio.Lock()
        if not self._task_lock.locked():
            await self._task_lock.acquire()  # free: returns without yielding
        else:
            try:
                await asyncio.wait_for(
                    self._task_lock.acquire(), timeout=max(0.001, deadline - time.monotonic())
                )
            except TimeoutError:
                raise self._locked_error(action, timeout) from None
        try:
            if not await self._inner.acquire(deadline):
                raise self._locked_error(action, timeout)
            self._owner, self._depth = task, 1
            try:
                yield
            finally:
                self._owner, self._depth = None, 0
                self._inner.release()
        finally:
            self._task_lock.release()


class OwnershipLock:
    """A long-lived named lock on one database, e.g. the ingester's ownership.

    Usage::

        lock = OwnershipLock(ref, "ingester")
        await lock.acquire()          # DatabaseLockedError if another process owns it
        ...
        lock.release()

    or ``async with OwnershipLock(ref, "ingester"):``. For a local database the
    lock file ``.haiku-<name>.lock`` lives in the database directory (created
    if missing); for a URI the lock is in-process only.

    ``holder`` names the command that holds it (``haiku-ingester serve``): while
    held, ``.haiku-<name>.owner`` beside the lock says that command and its pid,
    so a refused second owner names them (the lock file itself is truncated by
    every try to take it, so it cannot carry them).
    """

    def __init__(self, ref: DatabaseRef, name: str = "ingester", *, holder: str | None = None) -> None:
        if not name or not name.replace("-", "").replace("_", "").isalnum():
            raise ValueError(f"an ownership lock name must be alphanumeric (with - or _), got {name!r}")
        self.ref = ref
        self.name = name
        self.holder = holder
        self._inner = _ProcessAndFileLock(ref, f"own:{name}", f".haiku-{name}.lock")
        self._record = Path(self._inner.key) / f".haiku-{name}.owner" if isinstance(ref.location, Path) else None
        self._held = False

    @property
    def held(self) -> bool:
        return self._held

    async def acquire(self, timeout_s: float = 0.0) -> None:
        if self._held:
            return
        if not await self._inner.acquire(time.monotonic() + timeout_s):
            raise DatabaseLockedError.already_owned(
                _database_label(self.ref), self.ref.name, self.name, self._read_holder()
            )
        self._held = True
        self._write_holder()
        log.debug("store.ownership_acquired", database=self.ref.name, lock=self.name)

    def release(self) -> None:
        if self._held:
            self._held = False
            if self._record is not None:  # before the lock goes: a later holder writes its own
                with suppress(OSError):
                    self._record.unlink()
            with suppress(RuntimeError):
                self._inner.release()

    def _write_holder(self) -> None:
        if self._record is None:
            return
        record = {"command": self.holder, "pid": os.getpid()}
        with suppress(OSError):  # only a message would lack it
            self._record.write_text(json.dumps(record), encoding="utf-8")

    def _read_holder(self) -> dict[str, Any] | None:
        """The holder's ``{command, pid}`` as it wrote them, when it did."""
        if self._record is None:
            return None
        try:
            record = json.loads(self._record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return record if isinstance(record, dict) and isinstance(record.get("pid"), int) else None

    async def __aenter__(self) -> OwnershipLock:
        await self.acquire()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.release()
