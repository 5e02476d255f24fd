"""A small database's vectors in memory: exact search as one matrix product (docs/storage.md#vectors-in-memory).

A flat vector search through the engine reads and decodes the whole vector
column on every query (8-13 ms for 10,000 × 384 vectors), where the
arithmetic is a few million multiply-adds. So a long-lived process (the
client reused by MCP, the chat app, the inspector, Python) keeps each
small database's vectors as one read-only float32 matrix per chunks-table
version, with the other chunk columns beside it, and answers an unfiltered
vector query with the flat scan's distances: the same rows, the same order.

* Loaded on the **second** query against one table version, never the first:
  a one-shot ``haiku-rag search`` asks each database once and never pays
  for a matrix it would use once.
* Dropped when the version moves (the next query past it reloads).
* Within ``search.memory_vectors_mb`` for the whole process (default 512;
  the matrix and the chunk columns held beside it): a database past the budget, one with a vector index (past the ANN
  threshold) or a filtered query uses the engine, as before.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any

import numpy as np

from haiku.core.store.handles import Handles

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pyarrow as pa
    from lancedb.table import AsyncTable


class _Budget:
    """Bytes of vectors held in memory by this process, against ``search.memory_vectors_mb``."""

    def __init__(self) -> None:
        self.used = 0
        self._lock = threading.Lock()

    def reserve(self, size: int, limit_mb: int) -> bool:
        with self._lock:
            if self.used + size > limit_mb * 1024 * 1024:
                return False
            self.used += size
            return True

    def free(self, size: int) -> None:
        with self._lock:
            self.used = max(0, self.used - size)


BUDGET = _Budget()


class HeldRows:
    """One table version's vectors (float32, read-only) and the other chunk columns, row for row,
    with each row's id in the engine (``_rowid``), by which a full-text query names its rows."""

    def __init__(self, version: int, matrix: np.ndarray, columns: pa.Table, row_ids: np.ndarray, size: int) -> None:
        self.version = version
        self.matrix = matrix
        self.norms = np.linalg.norm(matrix, axis=1)
        self.columns = columns
        self._by_id = np.argsort(row_ids, kind="stable")
        self._sorted_ids = row_ids[self._by_id]
        self._finalizer = weakref.finalize(self, BUDGET.free, size)

    def positions(self, row_ids: np.ndarray) -> np.ndarray | None:
        """Where each of the engine's row ids sits in ``columns``; None when one is not held."""
        found = np.searchsorted(self._sorted_ids, row_ids)
        if len(found) and (found.max() >= len(self._sorted_ids) or (self._sorted_ids[found] != row_ids).any()):
            return None
        return self._by_id[found]

    def rows(self, positions: np.ndarray, columns: list[str]) -> list[dict[str, Any]]:
        """The rows at ``positions``, with ``columns`` (the vector from the matrix)."""
        wanted = [name for name in columns if name != "vector"]
        rows = self.columns.select(wanted).take(positions).to_pylist()
        if "vector" in columns:
            for row, index in zip(rows, positions, strict=True):
                row["vector"] = self.matrix[index].tolist()
        return rows

    def release(self) -> None:
        self._finalizer()


class VectorMemory:
    """One database's in-memory vectors (see the module docstring)."""

    def __init__(self, handles: Handles) -> None:
        self.handles = handles
        self._loaded: HeldRows | None = None
        self._seen: tuple[int, int] | None = None  # (version, queries asked of it)
        self._engine_only: int | None = None  # a version that stays with the engine (indexed, over budget)

    async def nearest(
        self, table: AsyncTable, query_vector: Sequence[float], limit: int, columns: list[str],
        *, version: int | None = None,
    ) -> list[tuple[dict[str, Any], float]] | None:  # fmt: skip
        """``(row, distance)`` of the ``limit`` nearest chunks, as the flat scan gives them; None: use the engine.

        ``version``: the table's, when the caller knows it (a pinned table); read otherwise.
        """
        if self.handles.config.search.memory_vectors_mb <= 0:
            return None
        loaded = await self.held(table, await table.version() if version is None else version)
        return None if loaded is None else self._search(loaded, query_vector, limit, columns)

    async def held(self, table: AsyncTable, version: int) -> HeldRows | None:
        """This table version's rows in memory, loaded on the second call at a version; None: use the engine."""
        budget_mb = self.handles.config.search.memory_vectors_mb
        if budget_mb <= 0:
            return None
        loaded = self._loaded
        if loaded is not None and loaded.version == version:
            return loaded
        if loaded is not None:
            self._loaded = None
            loaded.release()
        return await self._load(table, version, budget_mb)

    async def _load(self, table: AsyncTable, version: int, budget_mb: int) -> HeldRows | None:
        if self._engine_only == version:
            return None
        seen = self._seen
        self._seen = (version, 1 if seen is None or seen[0] != version else seen[1] + 1)
        if self._seen[1] < 2:
            return None  # the first query of a version: a one-shot process never loads
        if any("vector" in index.columns for index in await table.list_indices()):
            self._engine_only = version
            return None
        rows = await table.count_rows()
        size = rows * self.handles.vector_dim * 4
        if not BUDGET.reserve(size, budget_mb):
            self._engine_only = version
            return None
        try:
            data = await table.query().select(self.handles.chunk_columns(with_vectors=True)).with_row_id().to_arrow()
            row_ids = data.column("_rowid").to_numpy()
            vectors = data.column("vector").combine_chunks()
            matrix = np.asarray(vectors.values.to_numpy(zero_copy_only=False), dtype=np.float32)
            matrix = matrix.reshape(len(data), self.handles.vector_dim)
            matrix.setflags(write=False)
            columns = data.drop_columns(["vector", "_rowid"])
        except BaseException:
            BUDGET.free(size)
            raise
        # The other chunk columns count against the budget too: they are held beside the matrix.
        if not BUDGET.reserve(columns.nbytes, budget_mb):
            BUDGET.free(size)
            self._engine_only = version
            return None
        size += columns.nbytes
        loaded = HeldRows(version, matrix, columns, row_ids, size)
        self._loaded = loaded
        return loaded

    def _search(
        self, loaded: HeldRows, query_vector: Sequence[float], limit: int, columns: list[str]
    ) -> list[tuple[dict[str, Any], float]]:
        query = np.asarray(query_vector, dtype=np.float32)
        matrix = loaded.matrix
        if self.handles.config.search.vector_index_metric == "cosine":
            norms = loaded.norms * np.float32(np.linalg.norm(query))
            with np.errstate(divide="ignore", invalid="ignore"):
                distances = np.float32(1.0) - (matrix @ query) / norms
        else:
            difference = matrix - query
            distances = np.einsum("ij,ij->i", difference, difference)
        count = min(limit, len(distances))
        if count <= 0:
            return []
        # Every row as near as the count-th, so equal distances fall to row order, as in the flat scan.
        cutoff = np.partition(distances, count - 1)[count - 1] if count < len(distances) else np.inf
        near = np.flatnonzero(distances <= cutoff) if count < len(distances) else np.arange(len(distances))
        nearest = near[np.lexsort((near, distances[near]))][:count]
        rows = loaded.rows(nearest, columns)
        return [(row, float(distances[index])) for row, index in zip(rows, nearest, strict=True)]
