"""What an embedder raises when it cannot produce vectors (docs/configuration.md, embeddings)."""

from __future__ import annotations

from haiku.core.errors import ConfigError


class EmbeddingError(ConfigError, RuntimeError):
    """The embedder could not produce vectors (model missing, endpoint down)."""
