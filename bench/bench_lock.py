"""The one lock every timing benchmark takes, so that two never run at once (docs/benchmarks.md).

``with alone(log):`` holds ``/tmp/haiku_bench.lock`` for the timed part. A
benchmark started under ``flock /tmp/haiku_bench.lock …`` already runs alone:
its ancestor holds the lock, and taking it again from this process would wait
on that ancestor for ever, so then nothing more is taken. When another
benchmark holds the lock, the wait is said once instead of looking like a hang.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Callable, Iterator
from pathlib import Path

LOCK = Path("/tmp/haiku_bench.lock")


def _held_by_an_ancestor() -> bool:
    """Whether a process above this one is ``flock`` on the benchmark lock (Linux /proc)."""
    pid = os.getppid()
    while pid > 1:
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        if argv and os.path.basename(argv[0]) == b"flock" and str(LOCK).encode() in argv:
            return True
        pid = int(stat.rsplit(")", 1)[1].split()[1])  # the parent's pid, after the command name
    return False


@contextlib.contextmanager
def alone(log: Callable[[str], None] = print) -> Iterator[None]:
    """Hold the benchmark lock while the block runs (or rely on an ancestor ``flock`` holding it)."""
    if _held_by_an_ancestor():
        yield
        return
    with LOCK.open("w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log(f"waiting for {LOCK}: another benchmark is running")
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield
