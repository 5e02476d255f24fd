"""Which chunk holds a picture (docs/pictures.md, "What a description becomes").

The chunk cut from the picture or from one of its own items (its caption),
else the chunk of the nearest item before it in reading order, else after
it. A picture's description goes to that chunk at ingest, and an image query
that finds the picture answers with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from haiku.core.models import DocumentItem


class _Cut(Protocol):
    @property
    def item_refs(self) -> list[str]: ...


C = TypeVar("C", bound=_Cut)


def holding_chunk(chunks: Sequence[C], items: Sequence[DocumentItem], ref: str) -> C | None:
    """The chunk of ``chunks`` (in order) that holds picture ``ref``; ``None`` when none can."""
    own = {ref} | {item.self_ref for item in items if item.parent_ref == ref}
    for chunk in chunks:
        if own.intersection(chunk.item_refs):
            return chunk
    position = next((i for i, item in enumerate(items) if item.self_ref == ref), None)
    if position is None:
        return None
    placed = {r: chunk for chunk in reversed(chunks) for r in chunk.item_refs}
    before = (placed.get(item.self_ref) for item in reversed(items[:position]))
    after = (placed.get(item.self_ref) for item in items[position + 1 :])
    return next((c for c in before if c is not None), None) or next((c for c in after if c is not None), None)
