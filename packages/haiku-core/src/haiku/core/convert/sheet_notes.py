"""Notes written around a sheet's table, read as text (docs/ingester.md, "Tables").

People write notes above and below the table on a sheet ("Lots of people /
simply cannot resist writing / some notes at the top of their spreadsheets").
docling takes each block of touching cells for a table, so a note in the rows
touching the table joins it (its words become column names, "of consistency =
scientist"), and a note on its own becomes a table of one row. A reader sees
the table and the notes beside it; so here:

- a table of one row is a note, not a table (a row names no columns);
- a table's edge rows are notes where they are sparse: the table is its
  longest run of at least ``MIN_ROWS`` rows with ``DENSE`` of their cells
  filled (its header and body; a merged cell counts once), grown by each row
  above and below it with more than half its cells filled, or above it with a
  cell reaching down into the table (a two-row header's corner); the first row
  that has neither, and every row beyond it, is a note (so a row of group
  labels above a header, unmerged and without such a corner, reads as a note);
- each note row reads as one paragraph, its cells left to right, placed where
  it stands on the sheet; a cell that is both (docling gives a touching note
  to two blocks) reads once.

A table with a comment on its cells keeps its rows (the comment is aimed at
the table as it is).
"""

from __future__ import annotations

from typing import Any

DENSE = 0.8  # the share of a row's cells filled in a table's body and header
MIN_ROWS = 3  # a table's dense run: its header and two rows, at least


def notes_out_of_tables(document: Any, group: Any) -> None:
    """Move the notes among the tables of ``group`` (one sheet) out of them, in place."""
    from docling_core.types.doc import TableItem

    notes: dict[tuple[int, int], str] = {}  # (sheet row, column) -> text
    emptied = []
    for ref in list(group.children):
        table = ref.resolve(document)
        if not isinstance(table, TableItem) or getattr(table, "comments", None) or not table.prov:
            continue
        top, left = int(table.prov[0].bbox.t), int(table.prov[0].bbox.l)
        grid = table.data.grid
        if len(grid) == 1:
            notes.update(_row_cells(grid[0], top, left))
            emptied.append(table)
            continue
        kept = _table_rows([_cells_filled(row) for row in grid], _spans_down(grid), table.data.num_cols)
        if kept is None or kept == (0, len(grid)):
            continue
        first, end = kept
        for index in [*range(first), *range(end, len(grid))]:
            notes.update(_row_cells(grid[index], top + index, left))
        _keep_rows(table, first, end)
    if not notes:
        return
    if emptied:
        document.delete_items(node_items=emptied)
    _add_notes(document, group, notes)


def _cells_filled(row: list[Any]) -> int:
    """How many cells of a grid row hold text, a merged cell once."""
    return len({(c.start_row_offset_idx, c.start_col_offset_idx) for c in row if c.text.strip()})


def _spans_down(grid: list[list[Any]]) -> list[bool]:
    """Whether each row has a cell reaching down into the next (a header's corner cell)."""
    return [any(cell.end_row_offset_idx > index + 1 for cell in row) for index, row in enumerate(grid)]


def _table_rows(filled: list[int], spans_down: list[bool], columns: int) -> tuple[int, int] | None:
    """The rows (first, end) that are the table, the rest being notes; None when the table has
    no dense run to tell them by."""
    best: tuple[int, int] | None = None
    start = None
    for index, count in enumerate([*filled, -1]):
        if count >= DENSE * columns and count > 0:
            start = index if start is None else start
            continue
        if start is not None and index - start >= MIN_ROWS and (best is None or index - start > best[1] - best[0]):
            best = (start, index)
        start = None
    if best is None:
        return None
    first, end = best
    while first > 0 and (2 * filled[first - 1] > columns or spans_down[first - 1]):
        first -= 1
    while end < len(filled) and 2 * filled[end] > columns:
        end += 1
    return first, end


def _row_cells(row: list[Any], top: int, left: int) -> dict[tuple[int, int], str]:
    """A grid row's filled cells by (sheet row, column); a merged cell once, at its first column."""
    cells: dict[tuple[int, int], str] = {}
    for cell in row:
        text = " ".join(cell.text.split())
        if text:
            cells.setdefault((top, left + cell.start_col_offset_idx), text)
    return cells


def _keep_rows(table: Any, first: int, end: int) -> None:
    """The table cut to its rows first..end-1, its box moved down to its new first row, which
    is its header where docling took the first row for one."""
    from docling_core.types.doc import TableData

    headed = any(cell.column_header for cell in table.data.table_cells if cell.start_row_offset_idx == 0)
    cells = []
    for cell in table.data.table_cells:
        if cell.start_row_offset_idx >= first and cell.end_row_offset_idx <= end:
            row = cell.start_row_offset_idx - first
            cells.append(
                cell.model_copy(
                    update={
                        "start_row_offset_idx": row,
                        "end_row_offset_idx": cell.end_row_offset_idx - first,
                        "column_header": headed if row == 0 else cell.column_header,
                    }
                )
            )
    table.data = TableData(num_rows=end - first, num_cols=table.data.num_cols, table_cells=cells)
    box = table.prov[0].bbox
    table.prov[0].bbox = box.model_copy(update={"t": box.t + first, "b": box.t + end})


def _add_notes(document: Any, group: Any, notes: dict[tuple[int, int], str]) -> None:
    """A paragraph per note row in ``group``, and the group's items put in the sheet's order:
    what has no place on the sheet (its name's heading) first, then by row and column."""
    from docling_core.types.doc import DocItemLabel

    placed: dict[str, tuple[int, int]] = {}
    for row in sorted({r for r, _ in notes}):
        text = " ".join(text for (r, _c), text in sorted(notes.items()) if r == row)
        item = document.add_text(label=DocItemLabel.TEXT, text=text, parent=group, content_layer=group.content_layer)
        placed[item.self_ref] = (row, min(c for r, c in notes if r == row))
    for ref in group.children:
        item = ref.resolve(document)
        if item.self_ref not in placed and getattr(item, "prov", None):
            placed[item.self_ref] = (int(item.prov[0].bbox.t), int(item.prov[0].bbox.l))
    unplaced = [ref for ref in group.children if ref.cref not in placed]
    group.children = unplaced + sorted((r for r in group.children if r.cref in placed), key=lambda r: placed[r.cref])
