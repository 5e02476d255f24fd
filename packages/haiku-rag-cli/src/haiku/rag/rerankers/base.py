"""What every reranker offers the federating client."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from haiku.core.errors import HaikuError


class RerankerError(HaikuError, RuntimeError):
    """The reranker could not score (model missing, endpoint down or malformed answer)."""


class Reranker(Protocol):
    async def rerank(self, query: str, documents: Sequence[str], top_n: int) -> list[tuple[int, float]]:
        """``(index into documents, relevance score)`` pairs, best first, at most ``top_n``."""
        ...

    async def aclose(self) -> None: ...
