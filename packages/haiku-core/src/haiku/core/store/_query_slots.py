"""How many chunk queries one process runs on LanceDB at once (docs/fusion.md, "Latency").

A database without a vector index answers a vector query by reading every
stored vector (15 MB at 10,000 chunks of 384 dimensions) into a buffer of its
own. A search over many databases used to start every database's queries at
once, so as many such buffers were alive together: with 25 databases, about
375 MB held and freed on every search, which the allocator then kept. On a
machine with a few cores the queries cannot run side by side anyway, so a
process lets ``QUERY_SLOTS`` of them run at once (at least four, one per core
on a larger machine) and the others wait their turn: the same work and the
same results, in fewer buffers.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

QUERY_SLOTS = max(4, os.cpu_count() or 1)


class QuerySlots:
    """A bound on the queries in flight, per event loop (a semaphore belongs to one loop)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )
        self.in_flight = 0
        self.most_in_flight = 0  # the most queries seen in flight together (docs/fusion.md)

    async def run(self, query: Callable[[], Awaitable[T]]) -> T:
        """Run ``query`` once a slot is free."""
        loop = asyncio.get_running_loop()
        slots = self._by_loop.get(loop)
        if slots is None:
            slots = self._by_loop[loop] = asyncio.Semaphore(self.size)
        async with slots:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            try:
                return await query()
            finally:
                self.in_flight -= 1


chunk_queries = QuerySlots(QUERY_SLOTS)
