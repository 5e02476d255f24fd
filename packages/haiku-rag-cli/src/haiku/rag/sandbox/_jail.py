"""The process that runs sandboxed code. Standard library only: it runs under
``python -I -S`` inside fresh user, mount, network, PID, IPC and UTS namespaces
(made by ``unshare``), and imports nothing from haiku.

Before any user code runs it:
1. builds a new root on a small tmpfs holding only read-only bind mounts of the
   Python runtime and system libraries, the read-only ``/documents`` tree and a
   private writable ``/tmp`` tmpfs;
2. ``pivot_root``s into it and detaches the old root, so no host path exists;
3. lowers resource limits (address space, CPU time, file size, open files);
4. sets no_new_privs, empties the capability bounding set and drops every
   capability, so the code can neither undo the mounts nor regain privileges.

Then it forks: the code runs in the child, and this process (the PID
namespace's init, which the code can neither signal nor trace) relays between
the two. Only this process holds the control channel to haiku; the child
talks to it over a pipe pair of its own, and whatever the code writes there
is read as the code's output, helper calls and result, within bounds: at most
``max_output_chars`` characters of output are passed on, at most
``channel_bytes`` bytes and ``channel_messages`` messages are read per run,
and anything else ends the run with a ``stopped`` message naming why. So the
code can neither flood haiku nor speak for the sandbox ("ready", "failed",
"stopped", how much was cut).

Arguments: ``WORKDIR MOUNTS_JSON LIMITS_JSON``. The documents tree is at
``WORKDIR/documents``; ``WORKDIR/root`` is the empty mount point for the new root.
The control channel is the inherited stdin/stdout pair (newline-delimited
JSON); stdout is moved aside first so the code's own writes to fd 1 and 2 land
on stderr, which the parent drains and discards beyond a cap.
"""

from __future__ import annotations

import ast
import contextlib
import ctypes
import errno
import io
import json
import os
import platform
import re
import resource
import signal
import sys
import traceback

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

PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
PR_SET_SECUREBITS = 28
# NOROOT, NO_SETUID_FIXUP, KEEP_CAPS_LOCKED, NO_CAP_AMBIENT_RAISE, each with its lock bit.
SECUREBITS = 0x1 | 0x2 | 0x4 | 0x8 | 0x20 | 0x80 | 0x40
LINUX_CAPABILITY_VERSION_3 = 0x20080522

SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 217, "arm64": 217, "riscv64": 41, "ppc64le": 203, "s390x": 217}

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    _check(
        _libc.mount(
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


def _build_root(workdir: str, system_paths: list[str]) -> None:
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
    _check(_libc.syscall(ctypes.c_long(number), b".", b"."), "pivot_root")
    _check(_libc.umount2(b".", MNT_DETACH), "detach old root")
    os.chdir("/")
    _mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


def _limit(kind: int, value: int) -> None:
    _soft, hard = resource.getrlimit(kind)
    cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
    resource.setrlimit(kind, (cap, cap))


def _apply_limits(limits: dict[str, int]) -> None:
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


def _drop_privileges() -> None:
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    # Drop every capability the kernel knows; it answers EINVAL past the last one.
    for cap in range(64):
        if _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            if ctypes.get_errno() == errno.EINVAL and cap > 0:
                break
            _check(-1, f"drop capability {cap}")
    _check(_libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "clear ambient capabilities")
    _check(_libc.prctl(PR_SET_SECUREBITS, SECUREBITS, 0, 0, 0), "securebits")
    header = _CapHeader(LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), data), "capset")


class _CappedWriter(io.TextIOBase):
    """stdout for the code: passes the first ``limit`` characters to ``sink`` as written, counts the rest.

    Sent as written, so what the code printed before it was stopped (a timeout) still reaches haiku.
    """

    def __init__(self, limit: int, sink) -> None:
        self.limit = limit
        self.sink = sink
        self.kept = 0
        self.dropped = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        room = self.limit - self.kept
        if room > 0 and text:
            piece = text[:room]
            self.sink(piece)
            self.kept += len(piece)
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)


class _Channel:
    def __init__(self, read_fd: int, write_fd: int) -> None:
        self._reader = os.fdopen(read_fd, "r", encoding="utf-8")
        self._writer = os.fdopen(write_fd, "w", encoding="utf-8")

    def send(self, message: dict) -> None:
        self._writer.write(json.dumps(message) + "\n")
        self._writer.flush()

    def close(self) -> None:
        self._reader.close()
        self._writer.close()

    def receive(self) -> dict:
        line = self._reader.readline()
        if not line:
            raise RuntimeError("the sandbox lost its connection to haiku")
        return json.loads(line)

    def call(self, fn: str, **kwargs):
        self.send({"op": "call", "fn": fn, "args": kwargs})
        reply = self.receive()
        if not reply.get("ok"):
            raise RuntimeError(reply.get("error", f"{fn} failed"))
        return reply["value"]


def _run(code: str, channel: _Channel, max_chars: int) -> dict:
    out = _CappedWriter(max_chars, lambda text: channel.send({"op": "out", "text": text}))

    def search(query: str, limit: int = 10) -> list[dict]:
        """Search the selected databases; each hit names its ``source``."""
        return channel.call("search", query=query, limit=limit)

    def list_documents() -> list[dict]:
        """Every mounted document's metadata with its ``source``."""
        return channel.call("list_documents")

    namespace = {"__name__": "__main__", "search": search, "list_documents": list_documents}
    sys.stdout = out
    sys.stderr = out
    sys.stdin = io.StringIO("")
    value_text = None
    value_dropped = 0
    error = None
    try:
        tree = ast.parse(code, filename="<sandbox>", mode="exec")
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, "<sandbox>", "exec"), namespace)
        if last is not None:
            value = eval(compile(ast.Expression(last.value), "<sandbox>", "eval"), namespace)
            if value is not None:
                # Capped here: a huge value must not overflow the control channel's line.
                value_text = repr(value)
                value_dropped = max(0, len(value_text) - max_chars)
                value_text = value_text[:max_chars]
    except BaseException as exc:  # the code's failure is the tool's answer, SystemExit included
        frames = traceback.extract_tb(exc.__traceback__)
        user_frames = [f for f in frames if f.filename == "<sandbox>"]
        lines = traceback.format_list(user_frames) if user_frames else []
        error = "Traceback (most recent call last):\n" + "".join(lines)
        error += "".join(traceback.format_exception_only(type(exc), exc))
        error = error[:max_chars]  # an exception's text may be as huge as a value
    finally:
        sys.stdout = sys.__stdout__
        sys.stderr = sys.__stderr__
    return {"op": "done", "dropped": out.dropped + value_dropped, "value": value_text, "error": error}


def _stopped(reason: str, dropped: int = 0) -> dict:
    return {"op": "stopped", "reason": reason, "dropped": dropped}


class _Relay:
    """The child's messages, checked and bounded, passed on to haiku (module docstring)."""

    def __init__(self, channel: _Channel, child: int, limits: dict, max_chars: int) -> None:
        self.channel = channel
        self.child = child
        self.max_chars = max_chars
        self.max_bytes = int(limits["channel_bytes"])
        self.max_messages = int(limits["channel_messages"])
        self.kept = 0
        self.dropped = 0

    def run(self, from_child, to_child) -> dict:
        read = messages = 0
        while True:
            line = from_child.readline(self.max_bytes - read + 1)
            if not line:
                _, status = os.waitpid(self.child, 0)
                return {"op": "ended", "status": os.waitstatus_to_exitcode(status)}
            read += len(line)
            messages += 1
            if read > self.max_bytes or messages > self.max_messages:
                return _stopped(
                    f"it sent more than {self.max_bytes} bytes or {self.max_messages} messages to haiku in one run",
                    self.dropped,
                )
            try:
                message = json.loads(line)
            except ValueError:
                message = None
            op = message.get("op") if isinstance(message, dict) else None
            if op == "out" and isinstance(message.get("text"), str):
                self._out(message["text"])
            elif op == "call" and isinstance(message.get("fn"), str):
                args = message.get("args")
                self.channel.send({"op": "call", "fn": message["fn"], "args": args if isinstance(args, dict) else {}})
                reply = self.channel.receive()
                to_child.write((json.dumps(reply) + "\n").encode())
                to_child.flush()
            elif op == "done":
                return self._done(message)
            else:
                return _stopped("it wrote to the sandbox's channel what haiku did not ask for", self.dropped)

    def _out(self, text: str) -> None:
        room = max(0, self.max_chars - self.kept)
        piece = text[:room]
        if piece:
            self.channel.send({"op": "out", "text": piece})
            self.kept += len(piece)
        self.dropped += len(text) - len(piece)

    def _done(self, message: dict) -> dict:
        value, error = message.get("value"), message.get("error")
        value = value[: self.max_chars] if isinstance(value, str) else None
        error = error[: self.max_chars] if isinstance(error, str) else None
        told = message.get("dropped")
        dropped = self.dropped + (told if isinstance(told, int) and told > 0 else 0)
        return {"op": "done", "value": value, "error": error, "dropped": dropped}


def _start_code(channel: _Channel, request: dict) -> tuple[int, object, object]:
    """Fork the process that runs the code; it never holds the control channel."""
    to_child_r, to_child_w = os.pipe()
    from_child_r, from_child_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            channel.close()
            os.close(to_child_w)
            os.close(from_child_r)
            child = _Channel(to_child_r, from_child_w)
            child.send(_run(request["code"], child, int(request["max_output_chars"])))
        finally:
            os._exit(0)
    os.close(to_child_r)
    os.close(from_child_w)
    return pid, os.fdopen(from_child_r, "rb"), os.fdopen(to_child_w, "wb")


def main() -> None:
    workdir, mounts_json, limits_json = sys.argv[1:4]
    system_paths = json.loads(mounts_json)
    limits = json.loads(limits_json)
    # The control channel moves off fds 0/1; the code's raw writes go to stderr.
    channel = _Channel(os.dup(0), os.dup(1))
    os.dup2(2, 1)
    devnull_read, devnull_write = os.pipe()
    os.close(devnull_write)
    os.dup2(devnull_read, 0)
    os.close(devnull_read)
    try:
        _build_root(workdir, system_paths)
        _apply_limits(limits)
        _drop_privileges()
        # Neither traced nor read by the code's process: it runs as the same user.
        _check(_libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "not dumpable")
    except Exception as exc:
        channel.send({"op": "failed", "error": f"{type(exc).__name__}: {exc}"})
        raise SystemExit(3) from None
    channel.send({"op": "ready"})
    request = channel.receive()
    max_chars = int(request["max_output_chars"])
    child, from_child, to_child = _start_code(channel, request)
    try:
        outcome = _Relay(channel, child, limits, max_chars).run(from_child, to_child)
    except (BrokenPipeError, ConnectionError):
        outcome = _stopped("it closed the sandbox's channel before its result")
    if outcome["op"] != "ended":
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)
    channel.send(outcome)


if __name__ == "__main__":
    main()
