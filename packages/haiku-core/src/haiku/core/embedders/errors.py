"""What an embedder raises when it cannot produce vectors (docs/configuration.md, embeddings)."""

from __future__ import annotations

from haiku.core.errors import HaikuError


class EmbeddingError(HaikuError, RuntimeError):
    """The embedder could not produce vectors (model missing, endpoint down)."""
