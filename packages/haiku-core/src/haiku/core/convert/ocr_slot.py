"""The OCR slot: at most one page read by OCR at a time in one ingester (docs/ingester.md, "Memory").

Reading a page takes the OCR models' working memory (about 160 MB over a
worker's resting size); two conversion workers reading pages at once would
take it twice and put the ingester's process tree over its memory bound. The
conversion pool makes one lock file and hands its path to every worker it
starts (``share_slot``); a worker holds the lock (``fcntl.flock``, released by
the kernel if the worker dies) while it reads one page, so another worker's
page waits for the page in progress, never for a whole document. A process
given no slot (a client converting on its own, a Ray task) reads pages
without one.

With ``HAIKU_OCR_SLOT_TRACE`` set to a file, each holder appends
``PID enter`` when it takes the slot and ``PID leave`` before it lets it go:
a record of who read when, for tests and diagnosis.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

TRACE_ENV = "HAIKU_OCR_SLOT_TRACE"

_slot_path: str | None = None


def share_slot(path: str | None) -> None:
    """Read pages holding the slot at ``path`` from now on (None: without one)."""
    global _slot_path
    _slot_path = path


@contextlib.contextmanager
def ocr_slot() -> Iterator[None]:
    """Hold the slot while the block runs (at once where this process was given none)."""
    if _slot_path is None:
        yield
        return
    import fcntl

    fd = os.open(_slot_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        _trace("enter")
        try:
            yield
        finally:
            _trace("leave")
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _trace(event: str) -> None:
    path = os.environ.get(TRACE_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as trace:
            trace.write(f"{os.getpid()} {event}\n")
