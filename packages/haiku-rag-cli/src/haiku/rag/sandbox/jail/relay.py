"""The jail's side of a run: the child's messages, checked and bounded, passed on to haiku.

At most ``max_output_chars`` characters of output are passed on, at most
``channel_bytes`` bytes and ``channel_messages`` messages are read per run,
and anything else ends the run with a ``stopped`` message naming why. So the
code can neither flood haiku nor speak for the sandbox ("ready", "failed",
"stopped", how much was cut).
"""

from __future__ import annotations

import json
import os

from channel import Channel


def stopped(reason: str, dropped: int = 0) -> dict:
    """The message that ends a run the jail cut short, saying why."""
    return {"op": "stopped", "reason": reason, "dropped": dropped}


class Relay:
    """Reads the child's pipe until it is done, forwarding output and helper calls within bounds."""

    def __init__(self, channel: Channel, child: int, limits: dict, max_chars: int) -> None:
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
                return stopped(
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
                return stopped("it wrote to the sandbox's channel what haiku did not ask for", self.dropped)

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
