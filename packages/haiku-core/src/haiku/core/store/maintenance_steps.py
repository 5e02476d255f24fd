"""The bounded steps of automatic maintenance (docs/storage.md, "Auto-maintenance").

Automatic maintenance never rewrites the bulk of a table. It works in steps,
each one Lance commit of bounded size that its caller runs under the writer
lock on its own, releasing the lock before the next:

* **index deltas**: merge an index's newest deltas, at most ``STEP_ROWS``
  rows of them, into one (the main part of the index is never rewritten);
* **compaction**: merge one group of small fragments (under ``STEP_ROWS``
  rows each, into one of about that many, less than twice as many); larger
  fragments, and the rows deleted in them, stay for ``vacuum``;
* **old versions**: remove up to ``VERSIONS_PER_STEP`` untagged versions
  older than the retention.

``next_step`` looks at one table as it is now and names the first step it
needs, or ``None``; the caller runs it and asks again, so whatever a write
did in between is seen. Every step is one atomic commit: a process killed
in the middle of one leaves the table at its version before the step.

A write's own compaction is bounded the same way (``compact_after_write``):
once a table holds ``COMPACT_AT_FRAGMENTS`` fragments under ``STEP_ROWS``
rows, the write merges each index's newest deltas (at most ``STEP_ROWS``
rows each) and one group of those small fragments, so a write never
rewrites more than a step does, however many small fragments earlier runs
left; auto-maintenance and ``vacuum`` do the rest.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from haiku.core.store.lance_ops import optimize_indices, small_fragment_compaction

if TYPE_CHECKING:
    from lancedb.table import AsyncTable

# The most rows one merge of index deltas reads, and about what one compaction step rewrites (less
# than twice as many): what a write's own compaction of 32 fragments of 512 rows rewrites, so a
# step costs about what such a write does (measured: docs/benchmarks.md, "Scale").
STEP_ROWS = 16_384
VERSIONS_PER_STEP = 64
# A write compacts once its table holds this many fragments under ``STEP_ROWS`` rows: a write
# adds one, and a merge or search visits every fragment (docs/storage.md, "Indexes").
COMPACT_AT_FRAGMENTS = 32

DELTAS, COMPACTION, OLD_VERSIONS = "index deltas", "compaction", "old versions"
KINDS = (DELTAS, COMPACTION, OLD_VERSIONS)


@dataclass(frozen=True)
class Step:
    """One bounded piece of maintenance on one table; ``run()`` returns how much it did (rows or versions)."""

    table: str
    kind: str
    run: Callable[[], Awaitable[int]]


def newest_deltas_within(rows_per_part: list[int], budget: int) -> int:
    """How many of an index's newest deltas (parts after the first, the main one) hold at most ``budget`` rows."""
    count = total = 0
    for rows in reversed(rows_per_part[1:]):
        if total + rows > budget:
            break
        count, total = count + 1, total + rows
    return count


async def next_step(name: str, table: AsyncTable, retention_seconds: int, skip: Collection[str] = ()) -> Step | None:
    """The first step the table needs now, of the kinds not in ``skip``; ``None`` when it needs none."""
    dataset = await table.to_lance()
    planners = {DELTAS: _delta_step, COMPACTION: _compaction_step, OLD_VERSIONS: _versions_step}
    for kind in KINDS:
        if kind in skip:
            continue
        step = await planners[kind](name, table, dataset, retention_seconds)
        if step is not None:
            return step
    return None


async def _delta_step(name: str, table: AsyncTable, dataset: Any, retention_seconds: int) -> Step | None:
    for index_name in dict.fromkeys(ix["name"] for ix in dataset.list_indices()):
        stats = await asyncio.to_thread(dataset.stats.index_stats, index_name)
        rows_per_part = [int(r) for r in stats.get("num_indexed_rows_per_delta") or []]
        merge = newest_deltas_within(rows_per_part, STEP_ROWS)
        unindexed = int(stats.get("num_unindexed_rows") or 0)
        if merge >= 2 or unindexed > 0:
            rows = sum(rows_per_part[len(rows_per_part) - merge :]) + unindexed

            async def run(index_name: str = index_name, merge: int = merge, rows: int = rows) -> int:
                await optimize_indices(table, [index_name], merge)
                return rows

            return Step(name, DELTAS, run)
    return None


async def _compaction_step(name: str, table: AsyncTable, dataset: Any, retention_seconds: int) -> Step | None:
    from lance.optimize import Compaction

    plan = await asyncio.to_thread(Compaction.plan, dataset, small_fragment_compaction(dataset, STEP_ROWS))
    if plan.num_tasks() == 0:
        return None
    task = plan.tasks[0]

    async def run() -> int:
        def rewrite() -> None:
            Compaction.commit(dataset, [task.execute(dataset)])

        await asyncio.to_thread(rewrite)
        await table.checkout_latest()
        return sum(int(fragment.physical_rows) for fragment in task.fragments)

    return Step(name, COMPACTION, run)


async def _versions_step(name: str, table: AsyncTable, dataset: Any, retention_seconds: int) -> Step | None:
    def candidates() -> list[int]:
        tagged = {int(tag["version"]) for tag in dataset.tags.list().values()}
        versions = (int(v["version"]) for v in dataset.versions())
        return [v for v in versions if v != dataset.version and v not in tagged][:VERSIONS_PER_STEP]

    oldest = await asyncio.to_thread(candidates)
    if not oldest:
        return None

    async def run() -> int:
        stats = await asyncio.to_thread(
            dataset.cleanup_old_versions,
            older_than=timedelta(seconds=retention_seconds),
            versions=oldest,
            error_if_tagged_old_versions=False,
        )
        await table.checkout_latest()
        return int(stats.old_versions)

    return Step(name, OLD_VERSIONS, run)


def small_fragments(dataset: Any) -> int:
    """How many of the dataset's fragments hold fewer than ``STEP_ROWS`` rows."""
    return sum(1 for fragment in dataset.get_fragments() if fragment.metadata.physical_rows < STEP_ROWS)


async def compact_after_write(name: str, table: AsyncTable) -> int:
    """A write's compaction, bounded like a step: rows rewritten (0 when the table has few small fragments).

    Each index's newest deltas (at most ``STEP_ROWS`` rows of them) are merged
    first, since Lance merges only fragments the same index parts cover; then
    one group of the small fragments. The caller holds the writer lock.
    """
    dataset = await table.to_lance()
    if small_fragments(dataset) < COMPACT_AT_FRAGMENTS:
        return 0
    merges: dict[int, list[str]] = {}  # deltas to merge -> the indexes merging that many (one commit each)
    for index_name in dict.fromkeys(ix["name"] for ix in dataset.list_indices()):
        stats = await asyncio.to_thread(dataset.stats.index_stats, index_name)
        merge = newest_deltas_within([int(r) for r in stats.get("num_indexed_rows_per_delta") or []], STEP_ROWS)
        if merge >= 2:
            merges.setdefault(merge, []).append(index_name)
    for merge, names in merges.items():
        await optimize_indices(table, names, merge)
    step = await _compaction_step(name, table, await table.to_lance(), 0)
    return 0 if step is None else await step.run()
