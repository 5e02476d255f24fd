"""Embedder identity and the checks made with it (docs/configuration.md)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from haiku.core.config.embeddings import EmbeddingModelConfig
from haiku.core.errors import ConfigMismatchError, Hint, database_label, hinted_message, with_hint

MULTIMODAL_PROVIDERS = frozenset({"openai-multimodal"})


@dataclass(frozen=True)
class EmbedderIdentity:
    """What the stored vectors come from; ``multimodal``: images share the space of texts (docs/pictures.md)."""

    provider: str
    model: str
    vector_dim: int
    multimodal: bool = False

    @classmethod
    def from_config(cls, model: EmbeddingModelConfig) -> EmbedderIdentity:
        return cls(
            provider=model.provider,
            model=model.name,
            vector_dim=model.vector_dim,
            multimodal=model.provider in MULTIMODAL_PROVIDERS,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> EmbedderIdentity | None:
        if not data or not data.get("model"):
            return None
        return cls(
            provider=str(data["provider"]),
            model=str(data["model"]),
            vector_dim=int(data["vector_dim"]),
            multimodal=bool(data.get("multimodal", False)),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"provider": self.provider, "model": self.model, "vector_dim": self.vector_dim}
        if self.multimodal:  # recorded only when true: identities recorded before it read the same
            out["multimodal"] = True
        return out

    def describe(self) -> str:
        kind = ", multimodal" if self.multimodal else ""
        return f"{self.provider}/{self.model} at {self.vector_dim} dimensions{kind}"


class EmbedderDriftWarning(UserWarning):
    """A read-only open found a database written by another model of the same dimension."""


def _advice(name: str | None) -> Hint:
    return Hint("rebuild", "re-embed it (rebuild the database) or configure the recorded embedder", {"database": name})


def _kind(identity: EmbedderIdentity) -> str:
    return "the multimodal" if identity.multimodal else "the text-only"


def check_identity_on_open(
    recorded: EmbedderIdentity | None,
    configured: EmbedderIdentity,
    *,
    read_only: bool,
    name: str | None,
) -> None:
    """A database against the configuration: dimension always, model when writable."""
    if recorded is None:
        return
    label = database_label(name or None)
    if recorded.multimodal != configured.multimodal:
        # Picture vectors exist only beside a multimodal embedder's: never a mere drift warning.
        raise ConfigMismatchError.hinted(
            f"{label} records {_kind(recorded)} embedder {recorded.describe()}, but the configuration uses "
            f"{_kind(configured)} embedder {configured.describe()}",
            _advice(name),
        )
    if recorded.vector_dim != configured.vector_dim:
        raise ConfigMismatchError.hinted(
            f"{label} records {recorded.describe()}, but the configuration uses {configured.describe()}",
            _advice(name),
        )
    if (recorded.provider, recorded.model) != (configured.provider, configured.model):
        problem = f"{label} was written with {recorded.describe()}, but the configuration uses {configured.describe()}"
        if not read_only:
            raise ConfigMismatchError.hinted(problem, _advice(name))
        # The warning carries its hint as an error does, for a front end to word (haiku.core.errors).
        drift = EmbedderDriftWarning(hinted_message(problem, _advice(name)))
        warnings.warn(with_hint(drift, problem, _advice(name)), stacklevel=3)


def check_selection_identities(identities: Sequence[tuple[str | None, EmbedderIdentity | None]]) -> None:
    """Databases searched together with one query vector must share an embedder."""
    first: tuple[str | None, EmbedderIdentity] | None = None
    for name, identity in identities:
        if identity is None:
            continue
        if first is None:
            first = (name, identity)
            continue
        if identity != first[1]:
            raise ConfigMismatchError(
                f"databases '{first[0]}' and '{name}' were written with different embedders "
                f"({first[1].describe()} and {identity.describe()}); searching them together embeds "
                "the query once, so their vectors are not comparable"
            )
