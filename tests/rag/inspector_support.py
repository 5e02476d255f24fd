"""Helpers for the inspector's process tests: a terminal to run it in, and the text a screen shows."""

from __future__ import annotations

import os
import pty
import re
import select
import struct
import subprocess
import time
from collections.abc import Sequence

from support import cli_env

# Escape sequences: CSI (colours, cursor moves, modes), OSC (titles, links), charset picks.
ANSI = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Z0-9]|\x1b[=>]")


def screen_text(raw: bytes | str) -> str:
    """What a terminal stream shows, escape sequences removed."""
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
    return ANSI.sub("", text)


class Terminal:
    """A command running in a pseudo-terminal of ``rows`` x ``columns``; everything it writes is kept."""

    def __init__(self, argv: Sequence[str], *, rows: int = 40, columns: int = 140) -> None:
        import fcntl
        import termios

        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        self.process = subprocess.Popen(list(argv), stdin=slave, stdout=slave, stderr=slave, env=cli_env(),
                                        close_fds=True)
        os.close(slave)
        self.output = bytearray()

    def read_until(self, text: str, seconds: float = 120.0) -> str:
        deadline = time.monotonic() + seconds
        while text not in screen_text(bytes(self.output)):
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never shown; the screen showed: {screen_text(bytes(self.output))[-600:]}")
            if not self._read(0.2) and self.process.poll() is not None:
                raise AssertionError(f"exited {self.process.returncode} before showing {text!r}: "
                                     f"{screen_text(bytes(self.output))[-600:]}")
        return screen_text(bytes(self.output))

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return False
        try:
            data = os.read(self.master, 65536)
        except OSError:  # the other side closed
            return False
        self.output.extend(data)
        return bool(data)

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def wait(self, seconds: float = 60.0) -> int:
        deadline = time.monotonic() + seconds
        while self.process.poll() is None and time.monotonic() < deadline:
            self._read(0.1)
        while self._read(0.05):
            pass
        return self.process.wait(timeout=1)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.close(self.master)
