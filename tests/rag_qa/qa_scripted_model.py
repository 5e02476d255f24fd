"""A scripted stand-in for an OpenAI-compatible chat endpoint.

The one mock in these tests, because no real language model can run here:
a real HTTP server on 127.0.0.1 that answers ``POST /v1/chat/completions``
with the next step of a script (tool calls or a final answer) and records
every request it receives. Everything behind it (the agent loop, the tools,
the databases, the sandbox) is real.

A step is a reply message dict, or a callable taking the request body and
returning one, so a step can copy a chunk id out of the search results the
model was just shown. A request with ``"stream": true`` is answered with
server-sent events, the way OpenAI-compatible servers stream: text a word at
a time (or in the pieces a ``Streamed`` step names, pausing on its ``hold``),
a tool call's arguments split over two events.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from support import LoopbackServer, send_json


@dataclass(frozen=True)
class Streamed:
    """A final answer streamed in these pieces; after the first, the server waits for ``hold``."""

    pieces: tuple[str, ...]
    hold: threading.Event | None = None


Step = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]] | Streamed

_ids = itertools.count(1)


def call(name: str, **arguments: Any) -> dict[str, Any]:
    """An assistant message making one tool call."""
    return calls((name, arguments))


def calls(*pairs: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": f"call_{next(_ids)}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for n, a in pairs
        ],
    }


def answer(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def streamed(*pieces: str, hold: threading.Event | None = None) -> Streamed:
    return Streamed(tuple(pieces), hold)


def _events(message: dict[str, Any], pieces: tuple[str, ...] | None) -> Iterator[dict[str, Any]]:
    """The deltas a streaming server would send for ``message``."""
    text = message.get("content") or ""
    for piece in pieces if pieces is not None else re.findall(r"\S+\s*", text):
        yield {"content": piece}
    for index, raw in enumerate(message.get("tool_calls") or []):
        arguments = raw["function"]["arguments"]
        half = len(arguments) // 2
        yield {"tool_calls": [{"index": index, "id": raw["id"], "type": "function",
                               "function": {"name": raw["function"]["name"], "arguments": arguments[:half]}}]}
        yield {"tool_calls": [{"index": index, "function": {"arguments": arguments[half:]}}]}


def tool_results(request: dict[str, Any]) -> list[str]:
    """The contents of the tool messages of the request's last turn, in order."""
    out: list[str] = []
    for message in reversed(request["messages"]):
        if message["role"] != "tool":
            break
        out.insert(0, message["content"])
    return out


def last_tool_result(request: dict[str, Any]) -> str:
    results = tool_results(request)
    assert results, "the script expected a tool result in this request"
    return results[-1]


CHUNK_ID = re.compile(r"^Chunk ID: (\S+)$", re.MULTILINE)
COLLECTION = re.compile(r"^Collection: (\S+)$", re.MULTILINE)


def chunk_ids_in(text: str) -> list[str]:
    return CHUNK_ID.findall(text)


class ScriptedModel:
    """Serve on 127.0.0.1; ``play(*steps)`` loads a script; ``requests`` records bodies."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.streams = True
        """False: answer in one piece even when asked to stream, as some servers do."""
        self._script: list[Step] = []
        self._lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                status, payload, stream = model._reply(self.path, body)
                if stream is not None and body.get("stream") and model.streams:
                    self._stream(*stream)
                    return
                send_json(self, status, payload)

            def _stream(self, message: dict[str, Any], pieces: tuple[str, ...] | None, hold: Any) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                try:
                    for position, delta in enumerate(_events(message, pieces)):
                        chunk = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]}
                        self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                        self.wfile.flush()
                        if position == 0 and hold is not None:
                            hold.wait(timeout=60)
                    self.wfile.write(b"data: [DONE]\n\n")
                except (BrokenPipeError, ConnectionResetError):  # the client stopped listening
                    pass

        self._http = LoopbackServer(Handler)

    @property
    def base_url(self) -> str:
        return self._http.base_url

    def play(self, *steps: Step) -> ScriptedModel:
        with self._lock:
            self._script = list(steps)
            self.requests = []
            self.streams = True
        return self

    @property
    def remaining(self) -> int:
        return len(self._script)

    def _reply(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any], tuple | None]:
        """The status, the JSON reply and, for a reply that can stream, (message, pieces, hold)."""
        with self._lock:
            self.requests.append(body)
            if path.rstrip("/") != "/v1/chat/completions":
                return 404, {"error": {"message": f"no route {path}"}}, None
            if not self._script:
                return 500, {"error": {"message": "the test script has no more steps"}}, None
            step = self._script.pop(0)
        pieces, hold = None, None
        try:
            if isinstance(step, Streamed):
                message, pieces, hold = answer("".join(step.pieces)), step.pieces, step.hold
            else:
                message = step(body) if callable(step) else step
        except Exception as exc:  # surfaced to the code under test as an HTTP error
            return 500, {"error": {"message": f"script step failed: {type(exc).__name__}: {exc}"}}, None
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        return 200, {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "model": body.get("model"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        }, (message, pieces, hold)

    def close(self) -> None:
        self._http.close()
