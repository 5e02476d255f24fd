"""The process that runs sandboxed code. Standard library only: it runs under
``python -I -S`` inside fresh user, mount, network, PID, IPC and UTS namespaces
(made by ``unshare``), and imports nothing from haiku.

It is started as this folder (``python -I -S -B …/sandbox/jail``), so its own
modules are importable by their bare names; all are imported here, before the
host's filesystem is left behind. Before any user code runs it:
1. builds a new root and pivots into it, so no host path exists (``new_root``);
2. lowers resource limits, sets no_new_privs, empties the capability bounding
   set and drops every capability, so the code can neither undo the mounts nor
   regain privileges (``privileges``).

Then it forks: the code runs in the child (``user_code``), and this process
(the PID namespace's init, which the code can neither signal nor trace)
relays between the two (``relay``). Only this process holds the control
channel to haiku; the child talks to it over a pipe pair of its own, and
whatever the code writes there is read as the code's output, helper calls and
result, within bounds.

Arguments: ``WORKDIR MOUNTS_JSON LIMITS_JSON``. The documents tree is at
``WORKDIR/documents``; ``WORKDIR/root`` is the empty mount point for the new root.
The control channel is the inherited stdin/stdout pair (newline-delimited
JSON); stdout is moved aside first so the code's own writes to fd 1 and 2 land
on stderr, which the parent drains and discards beyond a cap.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys

from channel import Channel
from new_root import build_root
from privileges import apply_limits, drop_privileges, not_dumpable
from relay import Relay, stopped
from user_code import run_code


def _start_code(channel: Channel, request: dict) -> tuple[int, object, object]:
    """Fork the process that runs the code; it never holds the control channel."""
    to_child_r, to_child_w = os.pipe()
    from_child_r, from_child_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            channel.close()
            os.close(to_child_w)
            os.close(from_child_r)
            child = Channel(to_child_r, from_child_w)
            child.send(run_code(request["code"], child, int(request["max_output_chars"])))
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
    channel = Channel(os.dup(0), os.dup(1))
    os.dup2(2, 1)
    devnull_read, devnull_write = os.pipe()
    os.close(devnull_write)
    os.dup2(devnull_read, 0)
    os.close(devnull_read)
    try:
        build_root(workdir, system_paths)
        apply_limits(limits)
        drop_privileges()
        not_dumpable()
    except Exception as exc:
        channel.send({"op": "failed", "error": f"{type(exc).__name__}: {exc}"})
        raise SystemExit(3) from None
    channel.send({"op": "ready"})
    request = channel.receive()
    max_chars = int(request["max_output_chars"])
    child, from_child, to_child = _start_code(channel, request)
    try:
        outcome = Relay(channel, child, limits, max_chars).run(from_child, to_child)
    except (BrokenPipeError, ConnectionError):
        outcome = stopped("it closed the sandbox's channel before its result")
    if outcome["op"] != "ended":
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)
    channel.send(outcome)


if __name__ == "__main__":
    main()
