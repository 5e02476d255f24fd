"""What the jail takes away before the code runs: resource room and every privilege.

Resource limits are lowered (address space, CPU time, file size, open files,
processes, no core files); then no_new_privs is set, the capability bounding
set emptied, the ambient set cleared, the securebits locked and every
capability dropped, so the code can neither undo the mounts nor regain
privileges; last, the process is made not dumpable, so the code's process
(the same user) can neither trace nor read it.
"""

from __future__ import annotations

import ctypes
import errno
import resource

from syscalls import check, libc

PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
PR_SET_SECUREBITS = 28
# NOROOT, NO_SETUID_FIXUP, KEEP_CAPS_LOCKED, NO_CAP_AMBIENT_RAISE, each with its lock bit.
SECUREBITS = 0x1 | 0x2 | 0x4 | 0x8 | 0x20 | 0x80 | 0x40
LINUX_CAPABILITY_VERSION_3 = 0x20080522


def _limit(kind: int, value: int) -> None:
    _soft, hard = resource.getrlimit(kind)
    cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
    resource.setrlimit(kind, (cap, cap))


def apply_limits(limits: dict[str, int]) -> None:
    """Lower the resource limits to those haiku passed (``LIMITS_JSON``)."""
    _limit(resource.RLIMIT_AS, limits["memory_bytes"])
    _limit(resource.RLIMIT_CPU, limits["cpu_seconds"])
    _limit(resource.RLIMIT_FSIZE, limits["file_bytes"])
    _limit(resource.RLIMIT_NOFILE, 256)
    _limit(resource.RLIMIT_CORE, 0)
    _limit(resource.RLIMIT_NPROC, limits["processes"])


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_privileges() -> None:
    """Set no_new_privs, lock the securebits and drop every capability."""
    check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    # Drop every capability the kernel knows; it answers EINVAL past the last one.
    for cap in range(64):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            if ctypes.get_errno() == errno.EINVAL and cap > 0:
                break
            check(-1, f"drop capability {cap}")
    check(libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "clear ambient capabilities")
    check(libc.prctl(PR_SET_SECUREBITS, SECUREBITS, 0, 0, 0), "securebits")
    header = _CapHeader(LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    check(libc.capset(ctypes.byref(header), data), "capset")


def not_dumpable() -> None:
    """Neither traced nor read by the code's process: it runs as the same user."""
    check(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "not dumpable")
