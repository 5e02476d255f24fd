"""Chunks no reader shows, and their removal (docs/storage.md, "Consistency").

A chunk is current while its document row exists and carries the chunk's
revision (see ``reads``). A crash between the commits of a write leaves
chunks that are not: orphans of a document row that is absent, or chunks of
another revision than their row's (an update cut short); items and page
images of a revision their row does not name are removed with them
(``structure``). The first write of
each open store removes them, under the writer lock; ``remove_orphan_chunks``
does it on demand.
"""

from __future__ import annotations

from typing import Any

from haiku.core.logs import get_logger
from haiku.core.sql import sql_in, sql_string
from haiku.core.store.gate import WriteGate
from haiku.core.store.handles import Handles
from haiku.core.store.reads import batches
from haiku.core.store.schema import REVISION, other_revision
from haiku.core.store.structure import remove_structure_orphans

__all__ = ["Orphans", "current_in", "other_revision"]

log = get_logger("haiku.core.store")


def current_in(chunk: dict[str, Any], revisions: dict[str, str | None]) -> bool:
    """Whether a chunk row is current, given every document's revision (``Orphans.current_revisions``)."""
    return chunk["document_id"] in revisions and chunk.get(REVISION) == revisions[chunk["document_id"]]


class Orphans:
    """Finds and removes the chunks a crash left behind."""

    def __init__(self, handles: Handles, gate: WriteGate) -> None:
        self.handles = handles
        self.gate = gate
        self.checked = False  # whether this open store already removed them once

    async def current_revisions(self) -> dict[str, str | None]:
        """Each document's id and revision."""
        columns = self.handles.with_revision(["id"])
        rows = (await self.handles.documents.query().select(columns).to_arrow()).to_pylist()
        return {row["id"]: row.get(REVISION) for row in rows}

    async def remove_orphan_chunks(self) -> int:
        """Delete chunks that are not current (see the module docstring); returns how many."""
        async with self.gate.writing("removing orphan chunks"):
            removed = await self.remove_locked()
        if removed:
            self.gate.written()
        return removed

    async def remove_once(self) -> None:
        """Remove them on the first write of this open store (caller holds the writer lock)."""
        if not self.checked:
            await self.remove_locked()

    async def remove_locked(self) -> int:
        """Remove them now (caller holds the writer lock); returns how many."""
        self.checked = True
        await remove_structure_orphans(self.handles)
        chunks = self.handles.chunks
        columns = self.handles.with_revision(["document_id"])
        chunk_docs = await chunks.query().select(columns).to_arrow()
        if chunk_docs.num_rows == 0:
            return 0
        distinct = chunk_docs.group_by(columns).aggregate([]).to_pylist()  # one row per (document, revision)
        pairs = {(row["document_id"], row.get(REVISION)) for row in distinct}
        present = await self.current_revisions()
        orphans = sorted({doc for doc, _ in pairs if doc not in present})
        # Documents holding chunks of another revision than their row's: an update cut short.
        stale = sorted({doc for doc, rev in pairs if doc in present and rev != present[doc]})
        wheres = [sql_in("document_id", batch) for batch in batches(orphans)]
        for doc in stale:
            keep = present[doc]
            other = f"{REVISION} IS NOT NULL" if keep is None else other_revision(keep)
            wheres.append(f"document_id = {sql_string(doc)} AND {other}")
        removed = 0
        for where in wheres:
            removed += await chunks.count_rows(where)
            await chunks.delete(where)
        if removed:
            log.warning(
                "store.orphan_chunks_removed",
                database=self.handles.name,
                chunks=removed,
                documents=len(orphans) + len(stale),
            )
        return removed
