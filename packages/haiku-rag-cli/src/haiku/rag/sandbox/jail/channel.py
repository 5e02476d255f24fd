"""Newline-delimited JSON over a pair of file descriptors.

The jail speaks it to haiku over the inherited control channel, and the
code's process speaks it to the jail over a pipe pair of its own.
"""

from __future__ import annotations

import json
import os


class Channel:
    """One end of a JSON-lines conversation: send, receive, and a helper call awaiting its reply."""

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
