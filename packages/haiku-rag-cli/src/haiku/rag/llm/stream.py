"""A streamed chat completion: server-sent events (``stream: true``) read into one reply.

Each ``data:`` line holds a chunk whose ``choices[0].delta`` carries a piece
of the text, or pieces of tool calls keyed by ``index`` (the name in the
first piece, the JSON arguments spread over several); ``data: [DONE]`` ends
the stream. ``on_text`` is called with the reply's text so far after every
piece of text (docs/qa.md, "Streaming").
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from haiku.rag.llm.errors import ModelResponseError
from haiku.rag.llm.reply import ModelReply, tool_calls

TextSink = Callable[[str], None]
"""Takes the text of the reply so far, each time it grows."""


@dataclass
class _PartialCall:
    id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)

    def as_raw(self) -> dict[str, Any]:
        return {"id": self.id, "function": {"name": self.name, "arguments": "".join(self.arguments)}}


class _Assembly:
    """The reply being put together from the deltas of one stream."""

    def __init__(self, on_text: TextSink) -> None:
        self.text = ""
        self.calls: dict[int, _PartialCall] = {}
        self.on_text = on_text

    def add(self, delta: dict[str, Any]) -> None:
        piece = delta.get("content")
        if isinstance(piece, str) and piece:
            self.text += piece
            self.on_text(self.text)
        for position, raw in enumerate(delta.get("tool_calls") or []):
            index = raw.get("index", position)
            call = self.calls.setdefault(index if isinstance(index, int) else position, _PartialCall())
            if raw.get("id"):
                call.id = str(raw["id"])
            function = raw.get("function") or {}
            call.name += function.get("name") or ""
            arguments = function.get("arguments")
            if isinstance(arguments, dict):  # some servers send the arguments whole, as an object
                arguments = json.dumps(arguments)
            if arguments:
                call.arguments.append(arguments)

    def reply(self) -> ModelReply:
        raw = [self.calls[i].as_raw() for i in sorted(self.calls)]
        return ModelReply(content=self.text or None, tool_calls=tool_calls(raw))


def _delta(data: str, base_url: str) -> dict[str, Any] | None:
    """The delta of one event; None for events that carry none (a usage summary, a keep-alive)."""
    try:
        chunk = json.loads(data)
    except ValueError:
        raise ModelResponseError(
            f"the endpoint at {base_url} (qa.model.base_url) streamed something that is not JSON: {data[:300]}"
        ) from None
    if isinstance(chunk, dict) and chunk.get("error"):
        error = chunk["error"]
        message = error.get("message") if isinstance(error, dict) else error
        raise ModelResponseError(
            f"the question-answering model at {base_url} (qa.model.base_url) failed mid-answer: {message}"
        )
    choices = chunk.get("choices") if isinstance(chunk, dict) else None
    if not choices:
        return None
    delta = choices[0].get("delta") if isinstance(choices[0], dict) else None
    return delta if isinstance(delta, dict) else None


async def read_stream(lines: AsyncIterator[str], on_text: TextSink, *, base_url: str) -> ModelReply:
    """The reply the events in ``lines`` spell out, calling ``on_text`` as its text grows."""
    assembly = _Assembly(on_text)
    async for line in lines:
        if not line.startswith("data:"):
            continue  # blank separators, comments, event names
        data = line[len("data:") :].strip()
        if data == "[DONE]":
            break
        delta = _delta(data, base_url)
        if delta is not None:
            assembly.add(delta)
    return assembly.reply()
