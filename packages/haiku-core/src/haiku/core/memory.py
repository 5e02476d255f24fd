"""Giving freed memory back to the OS (glibc only; elsewhere a no-op), and reading what is held.

Two callers hand memory back: the ingester's encoder after each batch, and OCR
after each page it reads (``haiku.core.convert.ocr``: glibc keeps the 130-170 MB
of images and tensors a page read frees, so a worker waiting for the OCR slot
between its pages would stay near OCR's peak).

The encoder allocates activations whose sizes follow each batch's longest
text. With glibc's malloc, the holes that batches of varying lengths leave in
the heap were kept by the process: the daemon's RSS between batches crept up
by about 300 MiB over 1,000 SciFact documents and peaked at 1.6-1.9 GiB.
Trimming after each batch keeps the troughs flat and the peak near the
encoder's own (1.3 GiB on the same run).

Capping glibc's arenas (``MALLOC_ARENA_MAX=2``) was measured too: within the
noise once batches are trimmed, so it is not set.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

_libc: ctypes.CDLL | None = None


def _glibc() -> ctypes.CDLL | None:
    global _libc
    if _libc is None and sys.platform.startswith("linux"):
        try:
            _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        except OSError:
            return None
    return _libc


def release_free_memory() -> None:
    """Hand the pages malloc holds free back to the OS (``malloc_trim``); a no-op off glibc.

    Called after each encoder batch (see the module docstring); it takes a few
    milliseconds per batch of seconds.
    """
    libc = _glibc()
    trim = getattr(libc, "malloc_trim", None) if libc is not None else None
    if trim is not None:
        trim(0)


def resident_mib() -> float | None:
    """This process's resident memory now, MiB (None where ``/proc`` is missing)."""
    import os

    try:
        with open("/proc/self/statm") as handle:
            pages = int(handle.read().split()[1])
    except (OSError, IndexError, ValueError):
        return None
    return round(pages * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)
