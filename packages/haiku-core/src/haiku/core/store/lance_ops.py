"""Two Lance operations the index upkeep and the maintenance steps share (docs/storage.md, "Indexes").

Their own module so that ``indexes`` and ``maintenance_steps`` both build on
them without importing each other.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lance.optimize import CompactionOptions
    from lancedb.table import AsyncTable


async def optimize_indices(table: AsyncTable, names: list[str], merge: int) -> None:
    """Index the rows the named indexes lack: each into a new delta (``merge=0``), or merged with its newest ``merge`` parts."""
    dataset = await table.to_lance()
    await asyncio.to_thread(dataset.optimize.optimize_indices, index_names=names, num_indices_to_merge=merge)
    await table.checkout_latest()


def small_fragment_compaction(dataset: Any, target_rows: int) -> CompactionOptions:
    """Compaction of the fragments under ``target_rows`` rows into ones of about that many; larger ones stay.

    A larger fragment is left out even when rows were deleted from it:
    rewriting it would cost what it holds (``vacuum`` does that).
    """
    from lance.optimize import CompactionOptions

    large = [f.fragment_id for f in dataset.get_fragments() if f.metadata.physical_rows >= target_rows]
    return CompactionOptions(target_rows_per_fragment=target_rows, excluded_fragment_ids=large)
