"""The tool-calling loop: ask the model, run the tools it calls, repeat until it answers.

A tool signals a recoverable mistake of the model (an unknown collection, an
ambiguous citation, malformed arguments) by raising ``ToolRetry``: its message
goes back to the model as the tool's result and the loop goes on. Anything
else a tool raises ends the question with that error.

A tool message carries text only, so a tool that has pictures to show returns a
``ToolReply``: its parts (text and ``image_url`` items) follow the round's tool
results as one user message (docs/pictures.md).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from haiku.rag.llm.errors import RequestLimitError
from haiku.rag.llm.model import ChatModel, TextSink, ToolCall

log = logging.getLogger(__name__)

_THINKING = re.compile(r"<think>.*?</think>", re.DOTALL)


class ToolRetry(Exception):
    """A tool call the model should correct; the message tells it how."""


@dataclass(frozen=True)
class ToolReply:
    """A tool's text result, and content parts shown to the model after the round's tool results."""

    text: str
    parts: list[dict[str, Any]]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    handler: Callable[[dict[str, Any]], Awaitable[str | ToolReply]]

    def schema(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


def strip_thinking(text: str) -> str:
    """Reasoning models (qwen3, deepseek-r1) put their thinking inline; the answer is what follows."""
    return _THINKING.sub("", text).strip()


def visible_text(partial: str) -> str:
    """The part of a reply still being streamed that is answer: thinking, closed or not, left out."""
    text = _THINKING.sub("", partial)
    opened = text.find("<think>")
    return (text if opened < 0 else text[:opened]).strip()


async def _call(tool: Tool | None, call: ToolCall) -> str | ToolReply:
    if tool is None:
        return f"Error: there is no tool named {call.name!r}. Retry with one of the tools offered."
    try:
        arguments = call.parsed_arguments()
    except ValueError as exc:
        return f"Error: the arguments of {call.name} are not a JSON object ({exc}). Retry with valid JSON."
    try:
        return await tool.handler(arguments)
    except ToolRetry as exc:
        return f"Error: {exc}"


async def run_tools_loop(
    model: ChatModel,
    messages: list[dict[str, Any]],
    tools: list[Tool],
    *,
    request_limit: int,
    on_text: TextSink | None = None,
) -> str:
    """Drive the conversation in ``messages`` (appended to in place) to a final answer.

    ``on_text``, when given, sees the visible text of each reply as it streams;
    a reply that ends in tool calls is followed by the next one's text.
    """
    by_name = {tool.name: tool for tool in tools}
    schemas = [tool.schema() for tool in tools]
    sink = None if on_text is None else (lambda partial: on_text(visible_text(partial)))
    for request in range(1, request_limit + 1):
        # The last request allowed takes no tool calls, so the model has to answer with what it has.
        last = request == request_limit
        reply = await model.complete(messages, schemas, allow_tools=not last, on_text=sink)
        messages.append(reply.as_message())
        if not reply.tool_calls:
            return strip_thinking(reply.content or "")
        if last:
            break
        shown: list[dict[str, Any]] = []
        for call in reply.tool_calls:
            log.debug("tool call %s %s", call.name, call.arguments)
            result = await _call(by_name.get(call.name), call)
            if isinstance(result, ToolReply):
                shown += result.parts
                result = result.text
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        if shown:
            messages.append({"role": "user", "content": shown})
    raise RequestLimitError(
        f"the model made {request_limit} requests (qa.request_limit) without giving a final answer"
    )
