"""A conversion worker's own output (stderr), as one log event per file (docs/ingester.md, "Logs").

Whatever a worker prints while it converts a file (docling's warnings, a
traceback a backend printed and survived, a page that would not render) is
gathered and logged once, ``conversion worker output`` with the ``file`` named
and the ``lines`` together, rather than one event per line. Lines written just
before the worker's reply arrive a moment after it, so a file's lines are
logged ``GRACE_S`` after its conversion ends (or at once when the next one
starts); lines printed outside any conversion (at start-up) are gathered the
same way, with no file. At most ``MAX_LINES`` lines are kept per event.
"""

from __future__ import annotations

import asyncio
from typing import Any

GRACE_S = 0.2
MAX_LINES = 200


class WorkerOutput:
    def __init__(self, log: Any, *, worker_pid: int | None) -> None:
        self._log = log
        self._pid = worker_pid
        self._file: str | None = None
        self._lines: list[str] = []
        self._dropped = 0
        self._flush_at: asyncio.TimerHandle | None = None

    def begin(self, name: str) -> None:
        """A conversion of ``name`` starts: what came before is logged, what comes now is ``name``'s."""
        self.flush()
        self._file = name

    def end(self) -> None:
        """The conversion ended: its last lines may still be on their way."""
        self._flush_soon()

    def line(self, text: str) -> None:
        if len(self._lines) < MAX_LINES:
            self._lines.append(text)
        else:
            self._dropped += 1
        if self._file is None:
            self._flush_soon()

    def flush(self) -> None:
        if self._flush_at is not None:
            self._flush_at.cancel()
            self._flush_at = None
        if self._lines:
            more = f"\n… {self._dropped} more line(s)" if self._dropped else ""
            self._log.warning(
                "conversion worker output",
                file=self._file,
                worker_pid=self._pid,
                lines=len(self._lines) + self._dropped,
                output="\n".join(self._lines) + more,
            )
        self._lines, self._dropped, self._file = [], 0, None

    def _flush_soon(self) -> None:
        if self._flush_at is None:
            self._flush_at = asyncio.get_running_loop().call_later(GRACE_S, self.flush)
