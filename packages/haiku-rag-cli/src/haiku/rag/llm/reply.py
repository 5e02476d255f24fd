"""What the chat model answers: a final text, or tool calls to run first."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str | dict[str, Any]

    def parsed_arguments(self) -> dict[str, Any]:
        """The arguments as a dict; ValueError when the model wrote something else."""
        raw = self.arguments
        if isinstance(raw, dict):
            return raw
        if raw is None or not str(raw).strip():
            return {}
        value = json.loads(raw)
        if not isinstance(value, dict):
            raise ValueError("tool arguments must be a JSON object")
        return value


@dataclass(frozen=True)
class ModelReply:
    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)

    def as_message(self) -> dict[str, Any]:
        """The assistant message to append to the conversation."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content or ""}
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {
                        "name": call.name,
                        "arguments": call.arguments
                        if isinstance(call.arguments, str)
                        else json.dumps(call.arguments),
                    },
                }
                for call in self.tool_calls
            ]
        return message


def tool_calls(raw_calls: Iterable[dict[str, Any]]) -> list[ToolCall]:
    """The tool calls of an OpenAI message (``message.tool_calls``); nameless entries are dropped."""
    calls = []
    for position, raw in enumerate(raw_calls):
        function = raw.get("function") or {}
        name = function.get("name")
        if not name:
            continue
        calls.append(
            ToolCall(
                id=str(raw.get("id") or f"call_{position}"),
                name=str(name),
                arguments=function.get("arguments") or "{}",
            )
        )
    return calls
