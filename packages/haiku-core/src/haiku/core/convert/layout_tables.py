"""A table's cells from the text lines inside its region (docs/ingester.md, "PDF layout").

The layout model boxes the table; the PDF's text layer gives the text runs
inside it. Rows are runs whose vertical middles fall within the first run of the
row; columns start where runs start, far enough apart (a run that the text
layer merged across two columns stays in the first). A region that yields fewer than two rows or two columns is not a
table and stays text.
"""

from __future__ import annotations

from statistics import median
from typing import Any

from haiku.core.convert.layout_lines import Line

COLUMN_GAP = 2.0  # line heights between the left edges of two runs for them to start two columns


def _rows(lines: list[Line]) -> list[list[Line]]:
    rows: list[list[Line]] = []
    for line in sorted(lines, key=lambda ln: (ln.top, ln.left)):
        if not rows or line.cy > rows[-1][0].bottom:
            rows.append([])
        rows[-1].append(line)
    return rows


def _columns(lines: list[Line]) -> list[float]:
    """The left edges where the table's columns start: runs starting within ``COLUMN_GAP`` line
    heights of each other start one column, and a column holds at least two runs."""
    gap = COLUMN_GAP * median(line.height for line in lines)
    starts: list[list[float]] = []
    for left in sorted(line.left for line in lines):
        if starts and left - starts[-1][-1] <= gap:
            starts[-1].append(left)
        else:
            starts.append([left])
    return [group[0] for group in starts if len(group) >= 2]


def _column_of(line: Line, columns: list[float]) -> int:
    """The last column starting at or left of the run (a run before every column: the first)."""
    index = 0
    for i, left in enumerate(columns):
        if line.left >= left - 1.0:
            index = i
    return index


def table_data(lines: list[Line], page_height: float) -> Any | None:
    """docling ``TableData`` of the lines, or None when they do not form a grid."""
    from docling_core.types.doc import BoundingBox, CoordOrigin, TableCell, TableData

    rows = _rows(lines)
    columns = _columns(lines)
    if len(rows) < 2 or len(columns) < 2:
        return None
    cells: dict[tuple[int, int], list[Line]] = {}
    for r, row in enumerate(rows):
        for line in row:
            cells.setdefault((r, _column_of(line, columns)), []).append(line)
    table_cells = []
    for (r, c), runs in sorted(cells.items()):
        box = BoundingBox(
            l=min(x.left for x in runs), t=min(x.top for x in runs),
            r=max(x.right for x in runs), b=max(x.bottom for x in runs), coord_origin=CoordOrigin.TOPLEFT,
        )
        table_cells.append(
            TableCell(
                text=" ".join(x.text for x in sorted(runs, key=lambda x: (x.top, x.left))),
                bbox=box.to_bottom_left_origin(page_height=page_height),
                start_row_offset_idx=r, end_row_offset_idx=r + 1,
                start_col_offset_idx=c, end_col_offset_idx=c + 1,
                column_header=r == 0,
            )
        )
    return TableData(num_rows=len(rows), num_cols=len(columns), table_cells=table_cells)
