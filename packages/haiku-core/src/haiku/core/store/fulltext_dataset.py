"""Full-text queries on the engine's cheapest path (docs/storage.md#full-text-on-the-engines-cheapest-path).

Through LanceDB's async table a full-text query of a small database costs
about twice what the same query costs on the Lance dataset under it (the
table's query builder, its schema walk and its result conversion around the
same index search). A long-lived process therefore keeps, per local
database, one Lance dataset handle per chunks-table version and runs
unfiltered full-text queries on it, off the event loop: the same index, the
same BM25, the same rows in the same order.

* Prepared on the **second** full-text query against one table version:
  a one-shot ``haiku-rag search`` never imports ``lance`` (50-100 ms) for a
  query it runs once.
* Dropped when the version moves; remote databases and filtered queries
  keep LanceDB's table.
* Where the database's chunk columns are held in memory (``vector_memory``,
  with the engine's row ids), the query asks for row ids and scores only and
  the rows come from memory: reading the candidates' columns was most of the
  query's cost (docs/benchmarks.md, "Federation near the engine's floor").
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from haiku.core.store.handles import Handles
from haiku.core.store.schema import CHUNKS
from haiku.core.store.vector_memory import VectorMemory

if TYPE_CHECKING:
    from lancedb.table import AsyncTable


def _lance_query(text: str, boosts: Mapping[str, float] | None, column: str) -> Any:
    """The query LanceDB's table would give the dataset: a match of the text, or the boosted words' disjunction."""
    from lance.query import BooleanQuery, MatchQuery, Occur

    if boosts is None:
        return MatchQuery(text, column)
    return BooleanQuery(
        [(Occur.SHOULD, MatchQuery(word, column, boost=float(factor))) for word, factor in boosts.items()]
    )


class FullTextDataset:
    """One database's prepared full-text handle (see the module docstring)."""

    def __init__(self, handles: Handles, memory: VectorMemory) -> None:
        self.handles = handles
        self.memory = memory
        self._held: tuple[int, Any] | None = None  # (version, lance dataset)
        self._seen: tuple[int, int] | None = None  # (version, queries asked of it)

    async def rows(
        self,
        table: AsyncTable,
        text: str,
        boosts: Mapping[str, float] | None,
        column: str,
        columns: list[str],
        limit: int,
        *,
        version: int | None = None,
    ) -> list[tuple[dict[str, Any], float]] | None:
        """``(row, BM25)`` best first, as the table's query gives them; None: ask the table.

        ``version``: the table's, when the caller knows it (a pinned table); read otherwise.
        """
        path = self.handles.location.path
        if path is None:
            return None
        if version is None:
            version = await table.version()
        try:
            dataset = self._dataset(path / f"{CHUNKS}.lance", version)
        except Exception:
            return None  # the table names the failure (below)
        if dataset is None:
            return None
        # The chunk columns held in memory: the engine names its rows and scores them, no column read.
        held = await self.memory.held(table, version)
        try:
            query = _lance_query(text, boosts, column)
            if held is not None:
                found = await asyncio.to_thread(
                    dataset.to_table, columns=["_score"], with_row_id=True, limit=limit, full_text_query=query
                )
                positions = held.positions(found.column("_rowid").to_numpy())
                if positions is not None:
                    rows = held.rows(positions, columns)
                    return list(zip(rows, found.column("_score").to_pylist(), strict=True))
            found = await asyncio.to_thread(
                dataset.to_table, columns=[*columns, "_score"], limit=limit, full_text_query=query
            )
        except Exception:
            # A database that cannot be read fails through the table, which names it in the
            # library's words (docs/storage.md#how-failures-are-named); the handle is dropped.
            self._held = None
            return None
        return [(row, float(row["_score"])) for row in found.to_pylist()]

    def _dataset(self, path: Any, version: int) -> Any:
        held = self._held
        if held is not None and held[0] == version:
            return held[1]
        self._held = None
        seen = self._seen
        self._seen = (version, 1 if seen is None or seen[0] != version else seen[1] + 1)
        if self._seen[1] < 2:
            return None  # the first query of a version: a one-shot process never imports lance
        import lance

        dataset = lance.dataset(str(path), version=version)
        self._held = (version, dataset)
        return dataset
