"""The bottom of question answering: the chat-model HTTP client and the tool-calling loop.

``model`` speaks to an OpenAI-compatible chat endpoint; ``loop`` asks it, runs
the tools it calls and repeats until it answers. Nothing here knows about
databases, citations or the capability built on top (``haiku.rag.capability``).
"""

from __future__ import annotations

from haiku.rag.llm.errors import ModelResponseError, ModelUnavailableError, QAError, RequestLimitError

__all__ = ["ModelResponseError", "ModelUnavailableError", "QAError", "RequestLimitError"]
