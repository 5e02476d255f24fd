"""A scripted stand-in for an OpenAI-compatible chat endpoint.

The one mock in these tests, because no real language model can run here:
a real HTTP server on 127.0.0.1 that answers ``POST /v1/chat/completions``
with the next step of a script (tool calls or a final answer) and records
every request it receives. Everything behind it (the agent loop, the tools,
the databases, the sandbox) is real.

A step is a reply message dict, or a callable taking the request body and
returning one, so a step can copy a chunk id out of the search results the
model was just shown.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Step = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]

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
        self._script: list[Step] = []
        self._lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                status, payload = model._reply(self.path, body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def play(self, *steps: Step) -> ScriptedModel:
        with self._lock:
            self._script = list(steps)
            self.requests = []
        return self

    @property
    def remaining(self) -> int:
        return len(self._script)

    def _reply(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.requests.append(body)
            if path.rstrip("/") != "/v1/chat/completions":
                return 404, {"error": {"message": f"no route {path}"}}
            if not self._script:
                return 500, {"error": {"message": "the test script has no more steps"}}
            step = self._script.pop(0)
        try:
            message = step(body) if callable(step) else step
        except Exception as exc:  # surfaced to the code under test as an HTTP error
            return 500, {"error": {"message": f"script step failed: {type(exc).__name__}: {exc}"}}
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        return 200, {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "model": body.get("model"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        }

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
