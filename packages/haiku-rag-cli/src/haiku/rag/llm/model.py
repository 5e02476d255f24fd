"""An OpenAI-compatible chat endpoint with tool calls (Ollama, vLLM, llama.cpp server, …).

One request is ``POST {base_url}/chat/completions`` with the conversation and
the tool schemas; the reply is either tool calls or a final answer, read in
one piece or, when the caller watches the text grow, as a stream of
server-sent events (``haiku.rag.llm.stream``).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx

from haiku.core.config.models import QAModelConfig
from haiku.rag.llm.errors import ModelResponseError, ModelUnavailableError
from haiku.rag.llm.reply import ModelReply, ToolCall, tool_calls
from haiku.rag.llm.stream import TextSink, read_stream

__all__ = ["ChatModel", "ModelReply", "TextSink", "ToolCall"]

# Local models can take minutes for one long answer on a CPU.
DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=600.0, write=60.0, pool=10.0)


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
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        *,
        allow_tools: bool = True,
        on_text: TextSink | None = None,
    ) -> ModelReply:
        """One request. With ``on_text`` the reply is asked for as a stream and ``on_text`` sees its
        text grow; a server that answers in one piece anyway is read the same as without."""
        body: dict[str, Any] = {"model": self.config.name, "messages": messages, "stream": on_text is not None}
        if tools:
            body["tools"] = tools
            body["tool_choice"] = "auto" if allow_tools else "none"
        url = f"{self.base_url}/chat/completions"
        async with self._reaching():
            async with self._http.stream("POST", url, json=body) as response:
                if response.status_code >= 400:
                    await response.aread()
                    raise ModelResponseError(
                        f"the question-answering model at {self.base_url} (qa.model.base_url) answered "
                        f"HTTP {response.status_code} for model '{self.config.name}' (qa.model.name): "
                        f"{response.text[:500].strip()}"
                    )
                if on_text is not None and _is_event_stream(response):
                    return await read_stream(response.aiter_lines(), on_text, base_url=self.base_url)
                await response.aread()
        reply = self._parse(response)
        if on_text is not None and reply.content:
            on_text(reply.content)
        return reply

    @contextlib.asynccontextmanager
    async def _reaching(self) -> AsyncIterator[None]:
        """Transport failures, before or during the reply, as the errors that name qa.model.base_url."""
        try:
            yield
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

    def _parse(self, response: httpx.Response) -> ModelReply:
        try:
            payload = response.json()
            message = payload["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise ModelResponseError(
                f"the endpoint at {self.base_url} (qa.model.base_url) did not return an OpenAI chat "
                f"completion: {response.text[:300].strip()}"
            ) from None
        content = message.get("content")
        return ModelReply(
            content=content if isinstance(content, str) else None,
            tool_calls=tool_calls(message.get("tool_calls") or []),
        )


def _is_event_stream(response: httpx.Response) -> bool:
    return response.headers.get("content-type", "").split(";")[0].strip() == "text/event-stream"
