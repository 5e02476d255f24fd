"""Context expansion fanned out to each result's own database (docs/client.md#context-expansion)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from haiku.core.models import SearchResult

if TYPE_CHECKING:
    from haiku.rag.client._federation import Reach


def _input_position(result: SearchResult, positions: dict[str | None, int]) -> int:
    """Where an expanded result's earliest original chunk stood in the input."""
    ids = [result.chunk_id, *result.chunk_ids]
    found = [positions[i] for i in ids if i in positions]
    return min(found) if found else len(positions)


async def expand_context(reach: Reach, results: Sequence[SearchResult]) -> list[SearchResult]:
    """Descending score, ties in input order; a federating client has no repositories of its own,
    so each group goes to the database its ``source`` names, all at once."""
    if not results:
        return []
    max_chars = reach.config.search.max_context_chars
    groups: dict[str | None, list[tuple[int, SearchResult]]] = {}
    for position, result in enumerate(results):
        groups.setdefault(result.source, []).append((position, result))

    async def expand(source: str | None, members: list[tuple[int, SearchResult]]) -> list[tuple[int, SearchResult]]:
        if source is None and reach.covered.covers_multiple:
            reach.federation()
            raise ValueError("a result with no source cannot be expanded on a client covering several databases")
        reader = await reach.member(source)
        expanded = await reader.store.expand_context([r for _, r in members], max_chars)
        positions = {r.chunk_id: p for p, r in members}
        return [(_input_position(r, positions), r) for r in expanded]

    parts = await asyncio.gather(*(expand(source, members) for source, members in groups.items()))
    merged = [item for part in parts for item in part]
    merged.sort(key=lambda item: (-item[1].score, item[0]))
    return [result for _, result in merged]
