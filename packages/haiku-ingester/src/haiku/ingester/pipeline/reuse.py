"""Vectors an edit keeps: a chunk whose embedded text is unchanged takes its stored vector.

When a file is written again, its stored version's chunks are read with their
vectors and keyed by the exact text the encoder saw for each (headings and
text, ``embed_text``). A new chunk whose text is among them takes that vector;
only the others go to the encoder. The encoder is a function of the text, so
the result equals a fresh ingest of the edited file (up to the float noise of
batching, ~1e-7).

Reuse is exact or nothing: vectors come only from the same database (the
document being replaced), and only when the database's recorded embedder is
the one embedding now and no rebuild is half done (its vectors would be of two
models).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from haiku.core.convert import embed_text
from haiku.core.embedders import EmbedderIdentity

if TYPE_CHECKING:
    from haiku.core.store.reads import Reads


class ChunkReadableStore(Protocol):
    identity: EmbedderIdentity | None
    rebuild_marker: dict[str, Any] | None
    reads: Reads


@dataclass
class EmbedPlan:
    """Per text, its reused vector or ``None``; and which texts the encoder must embed."""

    vectors: list[list[float] | None]
    to_embed: list[int]

    @property
    def reused(self) -> int:
        return len(self.vectors) - len(self.to_embed)

    def complete(self, fresh: Sequence[list[float]]) -> list[list[float]]:
        """Every vector, in text order, with the encoder's vectors for the texts it embedded."""
        if len(fresh) != len(self.to_embed):
            raise ValueError(f"{len(self.to_embed)} texts were embedded but {len(fresh)} vectors came back")
        vectors = list(self.vectors)
        for index, vector in zip(self.to_embed, fresh, strict=True):
            vectors[index] = vector
        return vectors  # type: ignore[return-value]


def reuse_allowed(store: ChunkReadableStore, identity: EmbedderIdentity) -> bool:
    """The stored vectors are all of ``identity``: it is recorded and no rebuild is half done."""
    return store.identity == identity and store.rebuild_marker is None


async def stored_vectors(
    store: ChunkReadableStore, document_id: str | None, identity: EmbedderIdentity
) -> dict[str, list[float]]:
    """The stored document's vectors by the text they embed; empty where reuse is not exact."""
    if not document_id or not reuse_allowed(store, identity):
        return {}
    chunks = await store.reads.get_chunks(document_id, with_vectors=True)
    return {
        embed_text(chunk.headings, chunk.content): chunk.vector
        for chunk in chunks
        if chunk.vector is not None and len(chunk.vector) == identity.vector_dim
    }


def plan_embedding(texts: Sequence[str], known: dict[str, list[float]]) -> EmbedPlan:
    vectors: list[list[float] | None] = [known.get(text) for text in texts]
    return EmbedPlan(vectors=vectors, to_embed=[i for i, vector in enumerate(vectors) if vector is None])
