"""The inspector's table of documents: rows listed a batch per refresh, chunk counts filled in later.

The table measures every cell it is given before it paints, so a database of
many thousand documents would show nothing until all were measured: a
screenful is listed at once and the rest a batch per refresh. A document's
chunk count is read after its row is on screen, so the first screen waits on
no count; until then the row shows "…".
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable
from textual.widgets.data_table import CellDoesNotExist, RowDoesNotExist

from haiku.core.models import Document
from haiku.rag.apps.inspector.render import when

# The URI last: a long one runs off the pane's edge, never the counts or dates.
COLUMNS = (("title", "Title"), ("chunks", "Chunks"), ("created", "Created"), ("updated", "Updated"), ("uri", "URI"))
# Rows listed before the first paint (a tall terminal's screenful), then per refresh (0: none on
# refresh, the rest only when something needs them, as a jump does).
FIRST_ROWS = 100
ROW_BATCH = 500


class DocumentTable(DataTable[object]):
    """One row per shown document, keyed by its id; the chunk counts known so far, by (source, id)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        for key, label in COLUMNS:
            self.add_column(label, key=key)
        self.counts: dict[tuple[str | None, str], int] = {}
        self.rows_to_add: list[Document] = []  # the shown documents whose rows follow the first screen

    def show(self, documents: list[Document]) -> None:
        """List ``documents``: a screenful at once, the rest a batch per refresh."""
        self.clear()
        self.rows_to_add = documents[FIRST_ROWS:]
        self._add_rows(documents[:FIRST_ROWS])
        self._schedule_next_rows()

    def forget_rows(self) -> None:
        """Empty the table, dropping the rows still to be listed (another database is opening)."""
        self.rows_to_add = []
        self.clear()

    def add_remaining_rows(self) -> None:
        """Every shown document listed now (a jump needs its row)."""
        rows, self.rows_to_add = self.rows_to_add, []
        self._add_rows(rows)

    def uncounted(self, documents: list[Document]) -> list[Document]:
        """Those of ``documents`` whose chunks have not been counted yet."""
        return [d for d in documents if (d.source, d.id or "") not in self.counts]

    def set_count(self, document: Document, count: int) -> None:
        self.counts[(document.source, document.id or "")] = count
        try:
            self.update_cell(document.id or "", "chunks", str(count))
        except (CellDoesNotExist, RowDoesNotExist):
            pass  # filtered out meanwhile

    def _add_rows(self, documents: list[Document]) -> None:
        for document in documents:
            count = self.counts.get((document.source, document.id or ""))
            self.add_row(
                Text(document.title or "(untitled)"),
                "…" if count is None else str(count),
                when(document.created_at),
                when(document.updated_at),
                Text(document.uri or ""),
                key=document.id,
            )

    def _add_next_rows(self, rows: list[Document]) -> None:
        if rows is not self.rows_to_add:
            return  # the listing was refilled (another database, another filter) meanwhile
        self.rows_to_add = rows[ROW_BATCH:]
        self._add_rows(rows[:ROW_BATCH])
        self._schedule_next_rows()

    def _schedule_next_rows(self) -> None:
        if self.rows_to_add and ROW_BATCH > 0:  # a batch of none would refresh forever, listing nothing
            self.call_after_refresh(self._add_next_rows, self.rows_to_add)
