"""A ``/rerank`` endpoint in the common Cohere/Jina shape (also served by vLLM, TEI, llama.cpp)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from haiku.core.config import RerankModelConfig
from haiku.rag.rerankers.base import RerankerError


class HTTPReranker:
    """POST ``{base_url}/rerank`` with ``{model, query, documents, top_n}``.

    The answer is ``{"results": [{"index": i, "relevance_score": s}, …]}``.
    """

    def __init__(self, model: RerankModelConfig, timeout_s: float = 60.0) -> None:
        if not model.base_url:
            raise RerankerError("reranking.model.base_url is required for the http reranker")
        self._url = model.base_url.rstrip("/") + "/rerank"
        self._name = model.name
        self._api_key = model.api_key
        self._timeout_s = timeout_s
        self._http: Any = None

    async def rerank(self, query: str, documents: Sequence[str], top_n: int) -> list[tuple[int, float]]:
        if not documents:
            return []
        import httpx

        if self._http is None:
            self._http = httpx.AsyncClient(timeout=self._timeout_s)
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        payload = {"model": self._name, "query": query, "documents": list(documents), "top_n": top_n}
        try:
            response = await self._http.post(self._url, json=payload, headers=headers)
            response.raise_for_status()
            body = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise RerankerError(f"rerank request to reranking.model.base_url {self._url} failed: {exc}") from exc
        try:
            pairs = [(int(item["index"]), float(item["relevance_score"])) for item in body["results"]]
        except (KeyError, TypeError, ValueError) as exc:
            raise RerankerError(
                f"rerank answer from {self._url} is not in the Cohere/Jina shape "
                '{"results": [{"index", "relevance_score"}]}'
            ) from exc
        pairs.sort(key=lambda pair: (-pair[1], pair[0]))
        return pairs[:top_n]

    async def aclose(self) -> None:
        if self._http is not None:
            http, self._http = self._http, None
            await http.aclose()
