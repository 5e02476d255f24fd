"""Starting the jailed process and speaking its control channel.

The jail (the ``jail`` folder, run as a script) runs under ``unshare`` in new
user, mount, network, PID, IPC and UTS namespaces. This side owns the wall clock: when
``timeout_s`` passes, the whole process group is killed, and with it the PID
namespace (its init dies, so the kernel kills every process left in it).

It also bounds what it reads (docs/sandbox.md, "Bounds"): at most
``channel_bytes(max_output_chars)`` bytes and ``CHANNEL_MESSAGES`` messages
per run, and ``max_output_chars`` characters of output kept, whatever the
other end sends; past them the run is stopped and says so. The jail holds
the same bounds against the code's process, which never holds this channel:
"could not isolate the code" is believed only before the jail said it was
ready, and nothing the code writes can say it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import shutil
import signal
import sys
import sysconfig
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from haiku.rag.sandbox.errors import SandboxUnavailableError

JAIL = Path(__file__).with_name("jail")  # run as a folder: its modules import one another by name
# The system tree the interpreter needs; everything else of the host stays out.
SYSTEM_PATHS = ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin")
MEMORY_BYTES = 2 * 1024**3
FILE_BYTES = 64 * 1024**2
PROCESSES = 64
# What the parent keeps of the code's raw writes to fds 1 and 2 (print goes through
# the capped stdout instead; this only bounds memory when code bypasses it).
RAW_OUTPUT_CAP = 64 * 1024
# What one run may send back: its output (JSON may take 6 bytes a character), its value and
# traceback (each up to max_output_chars), and the helper calls, with room to spare.
CHANNEL_MESSAGES = 100_000
CHANNEL_BASE_BYTES = 16 * 1024**2


def channel_bytes(max_output_chars: int) -> int:
    """The most bytes haiku reads from one run's control channel."""
    return CHANNEL_BASE_BYTES + 24 * max_output_chars


def over_bounds_error(what: str) -> str:
    return f"Error: the code was stopped: {what} (docs/sandbox.md, \"Bounds\")"

Handler = Callable[[dict[str, Any]], Awaitable[Any]]


@dataclass(frozen=True)
class RunOutcome:
    stdout: str
    value: str | None
    error: str | None
    timed_out: bool
    truncated: bool


def _interpreter() -> str:
    base = getattr(sys, "_base_executable", None) or sys.executable
    return os.path.realpath(base)


def _runtime_paths(interpreter: str) -> list[str]:
    """System paths plus the interpreter's own installation when it lives elsewhere."""
    paths: list[str] = [p for p in SYSTEM_PATHS if os.path.lexists(p)]
    candidates = {
        os.path.realpath(sys.base_prefix),
        os.path.realpath(sys.base_exec_prefix),
        os.path.realpath(os.path.dirname(os.path.dirname(interpreter))),
    }
    libdir = sysconfig.get_config_var("LIBDIR")
    if libdir:
        candidates.add(os.path.realpath(libdir))
    resolved_system = [os.path.realpath(p) for p in paths]
    for candidate in sorted(candidates):
        if candidate == "/" or any(
            candidate == s or candidate.startswith(s.rstrip("/") + "/") for s in resolved_system
        ):
            continue
        paths.append(candidate)
    return paths


def _command(workdir: Path, timeout_s: float, max_output_chars: int) -> list[str]:
    unshare = shutil.which("unshare")
    if unshare is None:
        raise SandboxUnavailableError(
            "execute_code needs the `unshare` command (util-linux) to isolate code, and it is not on PATH"
        )
    interpreter = _interpreter()
    limits = {
        "memory_bytes": MEMORY_BYTES,
        "cpu_seconds": max(1, math.ceil(timeout_s)) + 1,
        "file_bytes": FILE_BYTES,
        "processes": PROCESSES,
        "channel_bytes": channel_bytes(max_output_chars),
        "channel_messages": CHANNEL_MESSAGES,
    }
    return [
        unshare,
        "--user",
        "--map-root-user",
        "--mount",
        "--net",
        "--pid",
        "--ipc",
        "--uts",
        "--fork",
        "--kill-child",
        interpreter,
        "-I",
        "-S",
        "-B",
        str(JAIL),
        str(workdir),
        json.dumps(_runtime_paths(interpreter)),
        json.dumps(limits),
    ]


_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONIOENCODING": "utf-8", "HOME": "/tmp"}


async def _drain(stream: asyncio.StreamReader, keep: bytearray) -> None:
    while chunk := await stream.read(65536):
        room = RAW_OUTPUT_CAP - len(keep)
        if room > 0:
            keep.extend(chunk[:room])


def _kill(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


async def run_in_jail(
    workdir: Path,
    code: str,
    *,
    handlers: dict[str, Handler],
    timeout_s: float,
    max_output_chars: int,
) -> RunOutcome:
    """Run ``code`` over ``workdir/documents``; ``handlers`` answer the helper calls."""
    (workdir / "root").mkdir(exist_ok=True)
    budget = channel_bytes(max_output_chars)
    process = await asyncio.create_subprocess_exec(
        *_command(workdir, timeout_s, max_output_chars),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=_ENV,
        cwd="/",
        start_new_session=True,
        limit=budget,
    )
    assert process.stdin and process.stdout and process.stderr
    raw = bytearray()
    drain = asyncio.create_task(_drain(process.stderr, raw))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    ready = False
    printed = _Printed(max_output_chars)  # the code's output, as it was written (kept on a timeout too)
    read = messages = 0

    async def receive() -> dict[str, Any] | None:
        nonlocal read, messages
        assert process.stdout
        line = await asyncio.wait_for(process.stdout.readline(), max(0.0, deadline - loop.time()))
        if not line:
            return None
        read += len(line)
        messages += 1
        if read > budget or messages > CHANNEL_MESSAGES:
            raise _OverBounds(f"it sent more than {budget} bytes or {CHANNEL_MESSAGES} messages to haiku in one run")
        message = json.loads(line)
        if not isinstance(message, dict):
            raise ValueError("not a message")
        return message

    def send(message: dict[str, Any]) -> None:
        assert process.stdin
        process.stdin.write((json.dumps(message) + "\n").encode())

    def stopped(why: str, dropped: Any = 0) -> RunOutcome:
        cut = printed.dropped > 0 or (isinstance(dropped, int) and dropped > 0)
        return RunOutcome(printed.text(), None, over_bounds_error(why), False, cut)

    try:
        while True:
            try:
                message = await receive()
            except TimeoutError:
                return RunOutcome(printed.text(), None, None, timed_out=True, truncated=printed.dropped > 0)
            except _OverBounds as over:
                return stopped(str(over))
            except (ValueError, asyncio.LimitOverrunError):
                return stopped("the sandbox's control channel carried garbage")
            if message is None:
                await process.wait()
                if not ready:
                    detail = bytes(raw).decode("utf-8", "replace").strip()
                    raise SandboxUnavailableError(
                        "the sandbox could not start: it needs Linux user namespaces "
                        f"(`unshare --user`); {detail or f'exit status {process.returncode}'}"
                    )
                return RunOutcome(
                    printed.text(), None,
                    f"the sandboxed process ended without a result (exit status {process.returncode})",
                    False, printed.dropped > 0,
                )
            op = message.get("op")
            if not ready:  # before the code runs, the jail only says whether it could isolate it
                if op == "failed":
                    raise SandboxUnavailableError(f"the sandbox could not isolate the code: {message.get('error')}")
                if op != "ready":
                    return stopped("the sandbox's control channel carried garbage")
                ready = True
                send({"code": code, "max_output_chars": max_output_chars})
            elif op == "out":
                printed.add(str(message.get("text") or ""))
                continue
            elif op == "call":
                send(await _answer(handlers, message))
            elif op == "done":
                dropped = message.get("dropped")
                return RunOutcome(
                    stdout=printed.text(),
                    value=_text_or_none(message.get("value")),
                    error=_text_or_none(message.get("error")),
                    timed_out=False,
                    truncated=printed.dropped > 0 or (isinstance(dropped, int) and dropped > 0),
                )
            elif op == "stopped":
                return stopped(str(message.get("reason") or "it broke the sandbox's bounds"), message.get("dropped"))
            elif op == "ended":
                return RunOutcome(
                    printed.text(), None,
                    f"the sandboxed process ended without a result (exit status {message.get('status')})",
                    False, printed.dropped > 0,
                )
            else:
                return stopped("the sandbox's control channel carried garbage")
            with contextlib.suppress(ConnectionError):
                await process.stdin.drain()
    finally:
        _kill(process)
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        drain.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await drain


class _OverBounds(Exception):
    """The run sent more than haiku reads from one run."""


class _Printed:
    """The code's output as it arrives, at most ``limit`` characters kept; the rest counted."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.kept = 0
        self.dropped = 0

    def add(self, text: str) -> None:
        piece = text[: max(0, self.limit - self.kept)]
        if piece:
            self.parts.append(piece)
            self.kept += len(piece)
        self.dropped += len(text) - len(piece)

    def text(self) -> str:
        return "".join(self.parts)


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


async def _answer(handlers: dict[str, Handler], message: dict[str, Any]) -> dict[str, Any]:
    fn = message.get("fn")
    handler = handlers.get(fn) if isinstance(fn, str) else None
    if handler is None:
        return {"ok": False, "error": f"unknown helper {fn!r}"}
    args = message.get("args")
    try:
        value = await handler(args if isinstance(args, dict) else {})
    except Exception as exc:
        return {"ok": False, "error": str(exc) or type(exc).__name__}
    return {"ok": True, "value": value}
