"""``qa`` and ``sandbox``: the chat model that answers questions, and the code it may run (docs/qa.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from haiku.core.config._base import Section


class QAModelConfig(Section):
    provider: Literal["openai"] = "openai"
    name: str = "qwen3"
    base_url: str = "http://localhost:11434/v1"
    api_key: str | None = None
    # The model reads images: the pictures of what it retrieved are sent to it (docs/pictures.md).
    images: bool = False


class QAConfig(Section):
    model: QAModelConfig = Field(default_factory=QAModelConfig)
    request_limit: int = Field(default=30, gt=0)
    # Pictures (or, for a text-only model, their captions) shown per answer (docs/pictures.md).
    max_images: int = Field(default=8, ge=0)


class SandboxConfig(Section):
    timeout_s: float = Field(default=30.0, gt=0)
    max_output_chars: int = Field(default=20000, gt=0)
