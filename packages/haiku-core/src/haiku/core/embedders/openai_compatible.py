"""Vectors from any OpenAI-compatible ``/embeddings`` endpoint (docs/configuration.md, embeddings)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from haiku.core.config.embeddings import EmbeddingModelConfig
from haiku.core.embedders.errors import EmbeddingError
from haiku.core.embedders.identity import EmbedderIdentity


class OpenAIEmbedder:
    """Any OpenAI-compatible ``/embeddings`` endpoint (Ollama, vLLM, llama.cpp server)."""

    def __init__(self, model: EmbeddingModelConfig, batch_size: int) -> None:
        self.identity = EmbedderIdentity.from_config(model)
        self.batch_size = batch_size
        self._name = model.name
        self._base_url = (model.base_url or "http://localhost:11434/v1").rstrip("/")
        self._api_key = model.api_key
        self._timeout_s = 120.0

    def load(self) -> None:
        """Nothing to load locally; the endpoint is reached on first use."""

    async def _request(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._post({"model": self._name, "input": list(texts)}, len(texts), "texts")

    async def _post(self, body: dict[str, Any], count: int, what: str) -> list[list[float]]:
        """POST ``body`` to ``/embeddings``: ``count`` vectors of the configured dimension, or EmbeddingError."""
        import httpx

        where = f"embeddings.model.base_url {self._base_url}"
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        try:
            async with httpx.AsyncClient(timeout=self._timeout_s) as http:
                response = await http.post(f"{self._base_url}/embeddings", json=body, headers=headers)
                response.raise_for_status()
        except httpx.HTTPError as exc:
            reason = str(exc) or type(exc).__name__
            raise EmbeddingError(f"embedding request to {where} failed: {reason}") from exc
        try:
            data = sorted(response.json()["data"], key=lambda item: item.get("index", 0))
            vectors = [[float(x) for x in item["embedding"]] for item in data]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise EmbeddingError(
                f"{where} answered with something other than an OpenAI embeddings response "
                f"({type(exc).__name__}: {exc})"
            ) from exc
        if len(vectors) != count:
            raise EmbeddingError(f"{where} returned {len(vectors)} vectors for {count} {what}")
        for vector in vectors:
            if len(vector) != self.identity.vector_dim:
                raise EmbeddingError(
                    f"embedding model {self._name!r} at {self._base_url} returned {len(vector)}-dimensional "
                    f"vectors, but embeddings.model.vector_dim is {self.identity.vector_dim}"
                )
        return vectors

    async def embed_query(self, text: str) -> list[float]:
        return (await self._request([text]))[0]

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            out.extend(await self._request(texts[start : start + self.batch_size]))
        return out
