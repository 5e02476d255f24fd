"""A real local Ray cluster for the Ray engine's tests, bound to 127.0.0.1.

``ray start --head --block`` runs in its own process group and is stopped by
that group's id. Ray turns ``--node-ip-address 127.0.0.1`` into the machine's
outward address unless told that this is a single-machine cluster
(``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``), so that variable is set for the
head, its workers and the ingester's driver alike; every port is chosen free
on loopback.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from support import cli_env

RAY = Path(sys.executable).parent / "ray"
LOOPBACK = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def ray_env(**extra: str) -> dict[str, str]:
    """The environment of the cluster and of every ingester that joins it."""
    return cli_env(RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0", RAY_USAGE_STATS_ENABLED="0", **extra)


class RayCluster:
    """One head node on loopback; ``address`` is its GCS address."""

    def __init__(self, *, num_cpus: int = 3, port: int | None = None, env: dict[str, str] | None = None) -> None:
        self.num_cpus = num_cpus
        self.env = env or {}  # for the workers: credentials the ingester never sends
        self.port = port or free_port()
        self.temp_dir = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # Ray's socket paths must stay short
        self.proc: subprocess.Popen | None = None

    @property
    def address(self) -> str:
        return f"{LOOPBACK}:{self.port}"

    def start(self, timeout_s: float = 90) -> RayCluster:
        command = [
            str(RAY), "start", "--head", "--block", "--disable-usage-stats",
            "--node-ip-address", LOOPBACK, "--port", str(self.port), "--num-cpus", str(self.num_cpus),
            "--include-dashboard", "false", "--ray-client-server-port", str(free_port()),
            "--dashboard-agent-listen-port", str(free_port()), "--temp-dir", self.temp_dir,
        ]  # fmt: skip
        log = open(Path(self.temp_dir) / "head.log", "wb")
        self.proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=ray_env(**self.env), start_new_session=True)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"ray start exited: {(Path(self.temp_dir) / 'head.log').read_text()[-2000:]}")
            with contextlib.suppress(OSError), socket.create_connection((LOOPBACK, self.port), timeout=1):
                return self
            time.sleep(0.3)
        self.stop()
        raise RuntimeError("the Ray head did not start in time")

    def stop(self) -> None:
        """SIGKILL the head's process group: every process of the cluster (an abrupt loss)."""
        if self.proc is None:
            return
        session = self.proc.pid
        with contextlib.suppress(ProcessLookupError):
            os.killpg(session, signal.SIGKILL)
        self.proc.wait(timeout=30)
        # Ray puts each worker in a process group of its own, in the head's session.
        for pid in self.session_pids(""):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.proc = None

    def worker_pids(self, title: str) -> list[int]:
        """Ray worker processes of this cluster whose title is ``title`` (``ray::convert_file`` while converting)."""
        assert self.proc is not None
        return self.session_pids(title)

    def session_pids(self, title: str) -> list[int]:
        """Processes of the head's session whose command line starts with ``title``."""
        session = self.proc.pid if self.proc is not None else None
        pids = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == session:
                continue
            try:
                if os.getsid(int(entry.name)) != session:
                    continue
            except (OSError, ProcessLookupError):
                continue
            cmdline = self.title_of(int(entry.name))
            if cmdline and cmdline.startswith(title):
                pids.append(int(entry.name))
        return pids

    @staticmethod
    def title_of(pid: int) -> str:
        """A process's title (what Ray shows as ``ray::TASK``), or "" once it is gone."""
        try:
            return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            return ""
