"""An OpenAI-compatible chat endpoint with tool calls (Ollama, vLLM, llama.cpp server, …).

One request is ``POST {base_url}/chat/completions`` with the conversation and
the tool schemas; the reply is either tool calls or a final answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx

from haiku.core.config.models import QAModelConfig
from haiku.rag.llm.errors import ModelResponseError, ModelUnavailableError

# Local models can take minutes for one long answer on a CPU.
DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=600.0, write=60.0, pool=10.0)


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


class ChatModel:
    """A client for one configured chat model; close it with ``aclose``."""

    def __init__(self, config: QAModelConfig, *, timeout: httpx.Timeout = DEFAULT_TIMEOUT) -> None:
        self.config = config
        self.base_url = config.base_url.rstrip("/")
        headers = {"Content-Type": "application/json"}
        if config.api_key:
            headers["Authorization"] = f"Bearer {config.api_key}"
        self._http = httpx.AsyncClient(timeout=timeout, headers=headers)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def complete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, allow_tools: bool = True
    ) -> ModelReply:
        body: dict[str, Any] = {"model": self.config.name, "messages": messages, "stream": False}
        if tools:
            body["tools"] = tools
            body["tool_choice"] = "auto" if allow_tools else "none"
        url = f"{self.base_url}/chat/completions"
        try:
            response = await self._http.post(url, json=body)
        except httpx.TimeoutException as exc:
            raise ModelUnavailableError(
                f"the question-answering model at {self.base_url} (qa.model.base_url) did not answer in time "
                f"({type(exc).__name__})"
            ) from None
        except httpx.HTTPError as exc:
            raise ModelUnavailableError(
                f"could not reach the question-answering model at {self.base_url} (qa.model.base_url): "
                f"{type(exc).__name__}: {exc or 'connection failed'}. Start the model server or point "
                "qa.model.base_url at one"
            ) from None
        if response.status_code >= 400:
            raise ModelResponseError(
                f"the question-answering model at {self.base_url} (qa.model.base_url) answered "
                f"HTTP {response.status_code} for model '{self.config.name}' (qa.model.name): "
                f"{response.text[:500].strip()}"
            )
        return self._parse(response)

    def _parse(self, response: httpx.Response) -> ModelReply:
        try:
            payload = response.json()
            message = payload["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise ModelResponseError(
                f"the endpoint at {self.base_url} (qa.model.base_url) did not return an OpenAI chat "
                f"completion: {response.text[:300].strip()}"
            ) from None
        calls = []
        for position, raw in enumerate(message.get("tool_calls") or []):
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
        content = message.get("content")
        return ModelReply(content=content if isinstance(content, str) else None, tool_calls=calls)
