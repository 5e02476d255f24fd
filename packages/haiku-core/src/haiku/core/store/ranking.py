"""Rank fusion shared by a store's hybrid search and the federating client."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

T = TypeVar("T")

RRF_K = 60


def reciprocal_rank_fusion(
    lists: Sequence[Sequence[T]],
    *,
    k: int = RRF_K,
    key: Callable[[T], Hashable] | None = None,
) -> list[tuple[T, float]]:
    """Fuse ranked lists: each item scores ``sum(1 / (k + rank))`` over the lists holding it.

    ``rank`` starts at 1. Items are identified by ``key(item)`` (the item itself
    by default); the object kept is the one from the earliest list that holds
    it. Best first; equal scores keep the better single rank, then the earlier
    list, then the earlier position, so the order is deterministic.
    """
    if k < 0:
        raise ValueError("k must be >= 0")
    identify = key or (lambda item: item)
    scores: dict[Hashable, float] = {}
    kept: dict[Hashable, T] = {}
    first_seen: dict[Hashable, tuple[int, int, int]] = {}
    for list_index, ranked in enumerate(lists):
        seen_here: set[Hashable] = set()
        for position, item in enumerate(ranked):
            ident = identify(item)
            if ident in seen_here:
                continue  # a list counts an item once, at its best rank
            seen_here.add(ident)
            rank = position + 1
            scores[ident] = scores.get(ident, 0.0) + 1.0 / (k + rank)
            if ident not in kept:
                kept[ident] = item
            best = first_seen.get(ident)
            candidate = (rank, list_index, position)
            if best is None or candidate < best:
                first_seen[ident] = candidate
    order = sorted(scores, key=lambda ident: (-scores[ident], first_seen[ident]))
    return [(kept[ident], scores[ident]) for ident in order]
