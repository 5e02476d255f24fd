"""A process's own peak memory, for benchmarks that measure in child processes.

``VmHWM`` from ``/proc/self/status``, not ``ru_maxrss``: Linux carries
``ru_maxrss`` over from the parent through fork and exec, so a child of a
large benchmark driver would report the driver's size instead of its own.
"""

from __future__ import annotations

import os
import resource
from pathlib import Path


def peak_rss_mib() -> float:
    """This process's peak resident memory, MiB."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # not Linux: KiB on most


def current_rss_mib() -> float:
    """This process's resident memory now, MiB."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return round(pages * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)
