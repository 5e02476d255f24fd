"""Embedders (docs/configuration.md).

``get_embedder(config)`` returns a process-wide embedder for the configured
model: the sentence-transformers model loads once per process, on first use,
never at import.

The names below load their modules on first use: the encoder modules
(``lean``, ``device``, ``tokenizing``, ``batching``) need only torch,
transformers and tokenizers, so they run where the rest of haiku is not
installed (bench/gpu_embed.py on a lent GPU machine).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__all__ = [
    "DEFAULT_LOCAL_MODEL",
    "Embedder",
    "EmbedderDriftWarning",
    "EmbedderIdentity",
    "EmbeddingError",
    "SentenceTransformerEmbedder",
    "check_identity_on_open",
    "check_selection_identities",
    "get_embedder",
    "is_multimodal",
    "local_model_path",
]

_HOMES = {
    "EmbeddingError": "errors",
    "EmbedderDriftWarning": "identity",
    "EmbedderIdentity": "identity",
    "check_identity_on_open": "identity",
    "check_selection_identities": "identity",
}

if TYPE_CHECKING:
    from haiku.core.embedders.errors import EmbeddingError
    from haiku.core.embedders.identity import (
        EmbedderDriftWarning,
        EmbedderIdentity,
        check_identity_on_open,
        check_selection_identities,
    )
    from haiku.core.embedders.local import (
        DEFAULT_LOCAL_MODEL,
        Embedder,
        SentenceTransformerEmbedder,
        get_embedder,
        is_multimodal,
        local_model_path,
    )


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(f"{__name__}.{_HOMES.get(name, 'local')}")
    value = getattr(module, name)
    globals()[name] = value
    return value
