"""How many malloc arenas a reading process keeps (docs/storage.md, "Memory").

glibc's allocator gives threads that allocate at once arenas of their own, up
to eight per core, and keeps what each arena once held. A search over many
databases runs their LanceDB queries at once on LanceDB's threads, each query
reading and freeing its vectors and posting lists, so the freed memory stays
spread over many arenas: measured on two cores with 25 databases of 10,000
chunks open, about 1,100 MiB of resident memory, against 820-870 MiB with two
arenas (docs/benchmarks.md, "Scale"), for the same latency.

``limit_malloc_arenas()`` caps them for the rest of the process (arenas made
before stay). A ``MALLOC_ARENA_MAX`` in the environment is the user's choice
and wins; elsewhere than glibc it does nothing.
"""

from __future__ import annotations

import ctypes
import os
import sys

MALLOC_ARENAS = 2
_M_ARENA_MAX = -8  # glibc's mallopt parameter


def limit_malloc_arenas(arenas: int = MALLOC_ARENAS) -> bool:
    """Cap this process's malloc arenas at ``arenas``; whether the cap was set."""
    if not sys.platform.startswith("linux") or "MALLOC_ARENA_MAX" in os.environ:
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc
        return False
    return bool(mallopt(_M_ARENA_MAX, arenas))
