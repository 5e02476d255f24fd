"""The status line `haiku-rag` shows on a terminal while it waits (haiku.core.progress)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TextIO

from haiku.core.progress import set_status_reporter


class TerminalStatus:
    """Writes the current wait on one line of ``stream`` and erases it when the wait ends."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._shown = False

    def __call__(self, message: str | None) -> None:
        try:
            if message is not None:
                self._stream.write(f"\r\033[2K{message}")
                self._shown = True
            elif self._shown:
                self._stream.write("\r\033[2K")
                self._shown = False
            self._stream.flush()
        except OSError:  # the terminal went away: the command goes on
            pass


def show_waits(argv: Sequence[str], stream: TextIO | None = None) -> bool:
    """Install the status line when ``stream`` (stderr) is a terminal and no JSON is asked for."""
    stream = stream if stream is not None else sys.stderr
    if "--json" in argv or not stream.isatty():
        return False
    set_status_reporter(TerminalStatus(stream))
    return True
