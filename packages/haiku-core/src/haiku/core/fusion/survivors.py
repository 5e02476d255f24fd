"""Fusing bare candidate lists, then enriching only the survivors (docs/client.md#how-results-from-several-databases-are-ranked, step 6).

Each selected database answers with bare candidates: its chunk queries alone,
without reading document rows (every LanceDB query costs a few milliseconds
whatever it reads, so this is one round trip less per list). The fused
survivors, at most ``limit`` of them, are then enriched through the database
each came from, all databases at once: one document-row read per database
that placed a survivor, which fills the document fields and finds orphans
(chunks whose document row is absent: a write in progress, or a crash).

The rule when an orphan survives fusion: it is dropped, and every database
that placed one is asked again for **checked** candidates (document rows read
with each list, orphans skipped, each list refilled to its length past them),
and fusion reruns. So a search never returns an orphan, still returns
``limit`` results when the databases hold that many, and ranks exactly as if
orphans had been skipped before fusion in each database that had one among
its survivors.
Survivors of a checked database need no second read. Each round checks at
least one more database, so this ends after at most one round per database;
with no write in progress there is exactly one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol, TypeVar

from haiku.core.models import SearchResult


class EnrichingDatabase(Protocol):
    """A database that fills the document fields of its own candidates (``Store.enrich``)."""

    @property
    def name(self) -> str | None: ...

    async def enrich(self, results: list[SearchResult]) -> list[SearchResult]: ...


C = TypeVar("C")
D = TypeVar("D", bound=EnrichingDatabase)
Fetch = Callable[[D, bool], Awaitable[C]]  # (database, checked) -> that database's candidates
Fuse = Callable[[dict[int, C]], Awaitable[list[SearchResult]]]  # candidates by database order -> survivors


async def fuse_and_enrich(
    stores: Sequence[tuple[int, D]], fetch: Fetch[D, C], fuse: Fuse[C]
) -> list[SearchResult]:
    """Fetch bare candidates from every database at once, fuse, enrich the survivors (see module doc)."""
    lists = await asyncio.gather(*(fetch(store, False) for _, store in stores))
    candidates = {order: found for (order, _), found in zip(stores, lists, strict=True)}
    checked: set[int] = set()
    while True:
        survivors = await fuse(candidates)
        enriched, orphaned = await _enrich(survivors, stores, checked)
        if not orphaned:
            return enriched
        again = [(order, store) for order, store in stores if order in orphaned]
        lists = await asyncio.gather(*(fetch(store, True) for _, store in again))
        candidates.update((order, found) for (order, _), found in zip(again, lists, strict=True))
        checked |= orphaned


async def _enrich(
    survivors: list[SearchResult], stores: Sequence[tuple[int, EnrichingDatabase]], checked: set[int]
) -> tuple[list[SearchResult], set[int]]:
    """Document fields for the survivors of unchecked databases; the orders of those that held orphans."""
    order_of = {store.name: order for order, store in stores}
    store_of = dict(stores)
    positions: dict[int, list[int]] = {}
    for index, result in enumerate(survivors):
        order = order_of[result.source]
        if order not in checked:
            positions.setdefault(order, []).append(index)
    answers = await asyncio.gather(
        *(store_of[order].enrich([survivors[i] for i in indexes]) for order, indexes in positions.items())
    )
    out: list[SearchResult | None] = list(survivors)
    orphaned: set[int] = set()
    for (order, indexes), enriched in zip(positions.items(), answers, strict=True):
        by_chunk = {result.chunk_id: result for result in enriched}
        for index in indexes:
            out[index] = by_chunk.get(survivors[index].chunk_id)
            if out[index] is None:
                orphaned.add(order)
    return [result for result in out if result is not None], orphaned
