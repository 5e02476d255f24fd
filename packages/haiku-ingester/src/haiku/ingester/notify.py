"""The systemd notification protocol (sd_notify), spoken directly.

A datagram of ``KEY=VALUE`` lines sent to the AF_UNIX socket named by
``NOTIFY_SOCKET`` (a leading ``@`` means the abstract namespace). Without that
variable every call is a no-op, so the daemon runs the same outside systemd.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Mapping


class SystemdNotifier:
    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        address = env.get("NOTIFY_SOCKET") or None
        if address is not None and address.startswith("@"):
            address = "\0" + address[1:]
        self._address = address
        self._watchdog_usec = self._watchdog_from(env)

    @staticmethod
    def _watchdog_from(env: Mapping[str, str]) -> int | None:
        raw = env.get("WATCHDOG_USEC")
        if not raw:
            return None
        pid = env.get("WATCHDOG_PID")
        if pid and pid.isdigit() and int(pid) != os.getpid():
            return None  # meant for another process (e.g. a wrapper)
        try:
            usec = int(raw)
        except ValueError:
            return None
        return usec if usec > 0 else None

    @property
    def enabled(self) -> bool:
        return self._address is not None

    @property
    def watchdog_interval_s(self) -> float | None:
        """How often to ping: half the watchdog timeout, as sd_watchdog_enabled(3) advises."""
        return None if self._watchdog_usec is None else self._watchdog_usec / 2_000_000

    def send(self, *lines: str) -> bool:
        if self._address is None:
            return False
        payload = "\n".join(lines).encode()
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            try:
                sock.connect(self._address)
                sock.sendall(payload)
            except OSError:
                return False
        return True

    def ready(self, status: str | None = None) -> bool:
        return self.send("READY=1", *([f"STATUS={status}"] if status else []))

    def reloading(self) -> bool:
        # Type=notify-reload wants the monotonic time of the reload request too.
        usec = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
        return self.send("RELOADING=1", f"MONOTONIC_USEC={usec}")

    def stopping(self) -> bool:
        return self.send("STOPPING=1")

    def watchdog(self) -> bool:
        return self.send("WATCHDOG=1")

    def status(self, text: str) -> bool:
        return self.send(f"STATUS={text}")
