"""The C library calls the jail makes through ``ctypes``, and how a failed one is raised."""

from __future__ import annotations

import ctypes
import os

libc = ctypes.CDLL(None, use_errno=True)


def check(result: int, what: str) -> None:
    """Raise ``OSError`` naming ``what`` when a libc call returned non-zero."""
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
