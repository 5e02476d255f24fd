"""A local sentence-transformers cross-encoder, loaded on first use and never downloaded."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from haiku.core.config import RerankModelConfig
from haiku.rag.rerankers.base import RerankerError


class CrossEncoderReranker:
    """``reranking.model.name`` is a local model directory (or a name already in the HF cache)."""

    def __init__(self, model: RerankModelConfig) -> None:
        self._name = model.name
        self._model: Any = None
        self._lock = threading.Lock()

    def load(self) -> Any:
        with self._lock:
            if self._model is None:
                from sentence_transformers import CrossEncoder

                path = Path(self._name).expanduser()
                where = str(path) if path.exists() else self._name
                try:
                    self._model = CrossEncoder(where, device="cpu", local_files_only=True)
                except Exception as exc:
                    raise RerankerError(
                        f"could not load the cross-encoder reranking.model.name {self._name!r}: {exc}"
                    ) from exc
            return self._model

    def _score(self, query: str, documents: Sequence[str]) -> list[float]:
        model = self.load()
        scores = model.predict([(query, doc) for doc in documents], show_progress_bar=False)
        return [float(s) for s in scores]

    async def rerank(self, query: str, documents: Sequence[str], top_n: int) -> list[tuple[int, float]]:
        if not documents:
            return []
        scores = await asyncio.to_thread(self._score, query, documents)
        ranked = sorted(enumerate(scores), key=lambda pair: (-pair[1], pair[0]))
        return ranked[:top_n]

    async def aclose(self) -> None:
        self._model = None
