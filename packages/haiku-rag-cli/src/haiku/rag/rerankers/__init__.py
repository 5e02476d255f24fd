"""Rerankers: score a query against candidate texts, whatever database they came from.

A reranker is built lazily by the first search that needs one, once per
covering client, and closed once by it (docs/client.md, docs/fusion.md).
"""

from __future__ import annotations

from haiku.core.config import RerankModelConfig
from haiku.rag.rerankers.base import Reranker, RerankerError

__all__ = ["Reranker", "RerankerError", "create_reranker"]


def create_reranker(model: RerankModelConfig) -> Reranker:
    """The reranker `reranking.model` configures. Loads nothing yet."""
    if model.provider == "cross-encoder":
        from haiku.rag.rerankers.cross_encoder import CrossEncoderReranker

        return CrossEncoderReranker(model)
    if model.provider == "http":
        from haiku.rag.rerankers.http import HTTPReranker

        return HTTPReranker(model)
    raise ValueError(f"reranking.model.provider {model.provider!r} is not supported; use cross-encoder or http")
