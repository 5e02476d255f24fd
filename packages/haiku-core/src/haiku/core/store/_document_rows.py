"""The documents table's rows (without content) kept in memory per table version (docs/storage.md, "Search").

Every search reads the document rows of its results (their uri, title and
metadata, and the revision that tells a current chunk from an orphan), one
LanceDB query per database and search, which costs a few milliseconds however
few rows it reads. A database of at most ``KEPT_DOCUMENTS`` documents has
them all read once per documents-table version instead (on the second read at
that version, so that a process searching once pays nothing more), and each
later search finds its rows in memory; the version is asked of LanceDB on every read (a
call that reads nothing but follows ``lancedb.read_consistency_interval_seconds``
like any query), so a write shows exactly when a query would show it. A larger
database is read per search, as before, and so is a database this store
writes (the ingester's): its version moves with every write.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

# About 300 bytes a row: a few MiB per database at most.
KEPT_DOCUMENTS = 20_000

Rows = dict[str, dict[str, Any]]


class KeptDocumentRows:
    """One database's document rows at the documents table's current version, when few enough."""

    def __init__(self) -> None:
        self._version: int | None = None
        self._rows: Rows | None = None  # None at ``_version``: not read, or too many to keep
        self._judged = False  # whether ``_rows`` was decided at ``_version``
        self.enabled = True

    async def rows(
        self,
        version: int,
        ids: Sequence[str],
        count: Callable[[], Awaitable[int]],
        read_all: Callable[[], Awaitable[list[dict[str, Any]]]],
    ) -> Rows | None:
        """The rows of ``ids`` present at ``version``, or None when this database's are not kept."""
        if not self.enabled:
            return None
        if self._version != version:
            # The first read at a version reads its own rows: a process that searches once
            # (a command-line search) never pays for reading every row.
            self._version, self._rows, self._judged = version, None, False
            return None
        if not self._judged:
            self._judged = True
            if await count() <= KEPT_DOCUMENTS:
                self._rows = {row["id"]: row for row in await read_all()}
        if self._rows is None:
            return None
        return {i: self._rows[i] for i in ids if i in self._rows}

    def stop(self) -> None:
        """Keep nothing from now on (the store writes documents)."""
        self.enabled = False
        self._version, self._rows = None, None
