"""The jail's filesystem: a new root of read-only binds, pivoted into, the host's detached.

The root is a small tmpfs holding read-only bind mounts of the Python runtime
and system libraries, the read-only ``/documents`` tree and a private writable
``/tmp`` tmpfs. ``pivot_root`` moves into it and the old root is detached, so
no host path exists for the code.
"""

from __future__ import annotations

import ctypes
import os
import platform
import re

from syscalls import check, libc

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_NOATIME = 1024
MS_NODIRATIME = 2048
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MS_RELATIME = 1 << 21
MNT_DETACH = 2

SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 217, "arm64": 217, "riscv64": 41, "ppc64le": 203, "s390x": 217}


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    check(
        libc.mount(
            source.encode() if source else None,
            target.encode(),
            fstype.encode() if fstype else None,
            ctypes.c_ulong(flags),
            data.encode() if data else None,
        ),
        f"mount {target}",
    )


def _locked_flags(path: str) -> int:
    """Flags of the mount holding ``path`` that a user namespace may not clear on remount."""
    st = os.statvfs(path)
    mapping = {
        os.ST_NOSUID: MS_NOSUID,
        os.ST_NODEV: MS_NODEV,
        os.ST_NOEXEC: MS_NOEXEC,
        os.ST_NOATIME: MS_NOATIME,
        os.ST_NODIRATIME: MS_NODIRATIME,
        os.ST_RELATIME: MS_RELATIME,
    }
    return sum(ms for st_flag, ms in mapping.items() if st.f_flag & st_flag)


def _bind_readonly(source: str, target: str, extra: int = 0) -> None:
    _mount(source, target, None, MS_BIND | MS_REC)
    _mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | _locked_flags(source) | extra)


def _unescape(field: str) -> str:
    """mountinfo escapes space, tab, newline and backslash as octal."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def _readonly_submounts(newroot: str, writable: set[str]) -> None:
    """A recursive bind brings the source's submounts along, writable; make each read-only."""
    with open("/proc/self/mountinfo", encoding="utf-8") as fh:
        points = [_unescape(line.split()[4]) for line in fh]
    for point in points:
        if not point.startswith(newroot + "/") or point in writable:
            continue
        _mount(None, point, None, MS_BIND | MS_REMOUNT | MS_RDONLY | _locked_flags(point))


def build_root(workdir: str, system_paths: list[str]) -> None:
    """Build the new root under ``WORKDIR/root`` and pivot into it, leaving no path to the host."""
    newroot = os.path.join(workdir, "root")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount("tmpfs", newroot, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
    for path in system_paths:
        inside = newroot + path
        if os.path.islink(path):
            os.makedirs(os.path.dirname(inside), exist_ok=True)
            if not os.path.lexists(inside):
                os.symlink(os.readlink(path), inside)
            continue
        if not os.path.isdir(path):
            continue
        os.makedirs(inside, exist_ok=True)
        _bind_readonly(path, inside)
    documents = newroot + "/documents"
    os.makedirs(documents)
    _bind_readonly(os.path.join(workdir, "documents"), documents, MS_NOSUID | MS_NODEV | MS_NOEXEC)
    os.makedirs(newroot + "/tmp")
    _mount("tmpfs", newroot + "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=64m,mode=1777")
    _readonly_submounts(newroot, {newroot + "/tmp"})

    number = SYS_PIVOT_ROOT.get(platform.machine())
    if number is None:
        raise OSError(f"the sandbox does not know pivot_root on {platform.machine()}")
    os.chdir(newroot)
    # pivot_root(".", ".") stacks the old root under the new one; detaching it
    # leaves no path back to the host filesystem.
    check(libc.syscall(ctypes.c_long(number), b".", b"."), "pivot_root")
    check(libc.umount2(b".", MNT_DETACH), "detach old root")
    os.chdir("/")
    _mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
