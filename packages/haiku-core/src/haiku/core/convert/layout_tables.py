"""A table's cells from the text runs inside its region (docs/ingester.md, "PDF layout").

The layout model boxes the table; the PDF's text layer gives the text runs
inside it, a line of the text layer split where its characters stand a column's
gap apart (``layout_runs``: the text layer runs "nDCG@10 Recall@100" together
across two columns). A table is read the way its reader reads it:

- rows: runs that overlap one another up and down are one row (a header cell
  set on two lines beside a one-line one is one row); two rows that stand
  closer together than the table's rows stand apart, one of them leaving a
  column empty and neither spanning columns, are one row whose cell wrapped;
- columns: the gaps that run down the table between the runs of its fullest
  rows (the body's rows, not a header whose cells span the columns under them),
  where few rows cross them (the lines of a paragraph cross every gap); a run
  that crosses such a gap spans those columns;
- the header: the rows above the first row that holds a number, where the
  body holds numbers (a results table's two-row header), else the first row.

A first column of bullets alone is a list whose marks stand apart from their
text, not a table.

A region that yields fewer than two rows or two columns is not a table and
stays text, and so is one whose grid reads like no table (``reads_as_table``):
the layout model takes a figure's scattered labels for a table now and then,
and their grid is mostly empty.
"""

from __future__ import annotations

import re
from itertools import pairwise
from statistics import median
from typing import Any

from haiku.core.convert.layout_lines import Line

ROW_OVERLAP = 0.25  # the share of a run's height it overlaps a row by to be on that row
COLUMN_GAP = 0.5  # run heights: the narrowest gap between two columns
MAX_CROSSING = 1 / 3  # the share of rows whose runs may cross a gap between two columns
WRAP_GAP = 0.75  # a row closer than this share of the usual gap between rows may be wrapped lines
MAX_EMPTY = 0.35  # the share of a grid's places left empty above which it is no table
MAX_CUT = 0.1  # words cut by the grid's rules per filled cell above which it is no table
MAX_HEADER_ROWS = 3
PROSE_WORDS = 5  # a column whose cells hold this many words (their median) is prose
LIST_MARKS = frozenset({"•", "◦", "▪", "‣", "·", "-", "–", "*", "\uf0b7", "\u25cf", "\u25a0"})
_NUMBER = re.compile(r"^[-+±−(]?[$€£]?\d[\d.,]*\s*[%)*†‡]?$")


def reads_as_table(cells: list[Any], rows: int, columns: int, cut_words: int = 0) -> bool:
    """docling ``TableCell``s of a ``rows`` × ``columns`` grid read like a table: text in two
    rows and two columns at least, at most ``MAX_EMPTY`` of the grid's places empty (a cell
    spanning columns fills each), and the words whole (``cut_words``: printed words that a rule
    between two cells runs through). A figure's labels set in a grid (a diagram's boxes, a
    chart's gridlines, a drawing read as columns) leave most places empty and cut its words."""
    filled = [cell for cell in cells if cell.text.strip()]
    if len({c.start_row_offset_idx for c in filled}) < 2 or len({c.start_col_offset_idx for c in filled}) < 2:
        return False
    covered = sum(
        (c.end_row_offset_idx - c.start_row_offset_idx) * (c.end_col_offset_idx - c.start_col_offset_idx) for c in filled
    )
    return covered >= (1 - MAX_EMPTY) * rows * columns and cut_words <= MAX_CUT * len(filled)


def _rows(runs: list[Line]) -> list[list[Line]]:
    rows: list[list[Line]] = []
    bottom = 0.0
    for run in sorted(runs, key=lambda x: (x.top, x.left)):
        if not rows or bottom - run.top < ROW_OVERLAP * run.height:
            rows.append([])
            bottom = run.bottom
        rows[-1].append(run)
        bottom = max(bottom, run.bottom)
    return rows


def _boundaries(rows: list[list[Line]]) -> list[float]:
    """Where one column ends and the next begins: the middles of the gaps between the runs of
    the fullest half of the rows, where the runs of at most ``MAX_CROSSING`` of all the rows
    cross them (a header spanning two columns does; the lines of a paragraph do on every row)."""
    fullest = sorted(rows, key=len, reverse=True)[: max(2, (len(rows) + 1) // 2)]
    runs = sorted((run for row in fullest for run in row), key=lambda x: x.left)
    gap = COLUMN_GAP * median(run.height for run in runs)
    boundaries: list[float] = []
    reach = runs[0].right
    for run in runs[1:]:
        if run.left - reach >= gap:
            boundaries.append((reach + run.left) / 2)
        reach = max(reach, run.right)
    crossing = MAX_CROSSING * len(rows)
    kept = [b for b in boundaries if sum(any(x.left < b < x.right for x in row) for row in rows) <= crossing]
    return _header_gaps_closed(rows, kept)


def _header_gaps_closed(rows: list[list[Line]], boundaries: list[float]) -> list[float]:
    """The boundaries with each column that only header rows fill (a header spanning two columns,
    centred over the gap between them: "D⁵₄ₕ" over "1st alternative" and "2nd alternative") made
    one boundary at its middle, which the header's text then spans."""
    body = rows[MAX_HEADER_ROWS:]
    if len(body) < 2:
        return boundaries
    closed: list[float] = []
    index = 0
    while index < len(boundaries):
        if index + 1 < len(boundaries):
            low, high = boundaries[index], boundaries[index + 1]
            if not any(low < x.cx < high for row in body for x in row):
                closed.append((low + high) / 2)
                index += 2
                continue
        closed.append(boundaries[index])
        index += 1
    return closed


def _column(x: float, boundaries: list[float]) -> int:
    return sum(1 for b in boundaries if b < x)


def _cells(row: list[Line], boundaries: list[float]) -> list[tuple[int, int, list[Line]]]:
    """The row's cells, left to right: (first column, one past the last, runs); runs that share
    a column are one cell. A run reaching into the column where the row's next run starts spans
    no column: it is a long entry of a left-set column ("standard" over "CL-0" and "PL"), not a
    header over two."""
    cells: list[tuple[int, int, list[Line]]] = []
    ordered = sorted(row, key=lambda x: x.left)
    for index, run in enumerate(ordered):
        start, end = _column(run.left, boundaries), _column(run.right, boundaries) + 1
        if index + 1 < len(ordered):
            end = max(start + 1, min(end, _column(ordered[index + 1].left, boundaries)))
        if cells and start < cells[-1][1]:
            first, last, runs = cells.pop()
            cells.append((first, max(last, end), [*runs, run]))
        else:
            cells.append((start, end, [run]))
    return cells


def _unwrapped(rows: list[list[Line]], boundaries: list[float]) -> list[list[Line]]:
    """The rows with a cell's wrapped lines joined into one row: two rows closer together than
    ``WRAP_GAP`` of the gap that usually parts the table's rows, one of them leaving a column
    empty (a name set on two lines beside its numbers, at the top or the bottom of the row),
    neither spanning columns (a header over two columns is a row of its own)."""
    gaps = [min(x.top for x in below) - max(x.bottom for x in above) for above, below in pairwise(rows)]
    if len(gaps) < 2 or median(gaps) <= 0:
        return rows
    close = WRAP_GAP * median(gaps)
    columns = len(boundaries) + 1
    joined = [rows[0]]
    for row, gap in zip(rows[1:], gaps, strict=True):
        pair = (joined[-1], row)
        partial = min(len({_column(x.left, boundaries) for x in r}) for r in pair) < columns
        if gap < close and partial and not any(_spanning(r, boundaries) for r in pair):
            joined[-1] = joined[-1] + row
        else:
            joined.append(row)
    return joined


def _carried_over(rows: list[list[Line]], boundaries: list[float]) -> list[list[Line]]:
    """The rows with a cell's text carried over onto the next line joined into one row: a row
    that fills some of the columns the row above fills, and only those, each with words that
    carry on the text above (starting in lower case, or after a hyphen or a comma). LaTeX sets a
    paragraph column's lines as far apart as its rows ("Random intercept" / "with fixed mean.")."""
    joined: list[list[Line]] = []
    for row in rows:
        if joined and not _spanning(row, boundaries) and _carries_on(_by_column(joined[-1], boundaries), _by_column(row, boundaries)):
            joined[-1] = joined[-1] + row
        else:
            joined.append(row)
    return joined


def _by_column(row: list[Line], boundaries: list[float]) -> dict[int, str]:
    texts: dict[int, list[Line]] = {}
    for run in row:
        texts.setdefault(_column(run.left, boundaries), []).append(run)
    return {col: " ".join(x.text for x in sorted(runs, key=lambda x: (x.top, x.left))) for col, runs in texts.items()}


def _carries_on(above: dict[int, str], row: dict[int, str]) -> bool:
    if not row or not set(row) < set(above):
        return False
    return all(
        text[:1].islower() or above[col].endswith(("-", ",", "(", "/")) for col, text in row.items()
    )


def _spanning(row: list[Line], boundaries: list[float]) -> bool:
    """A run of the row crosses a gap between two columns: a header over the columns under it."""
    return any(_column(x.left, boundaries) != _column(x.right, boundaries) for x in row)


def _list_marks(laid: list[list[tuple[int, int, list[Line]]]], texts: list[list[str]]) -> bool:
    """The first column holds only list marks (a bullet stands a column's gap before its text):
    a list, not a table."""
    first = [text for row, row_texts in zip(laid, texts, strict=True)
             for (start, end, _), text in zip(row, row_texts, strict=True) if start == 0 and end == 1]
    return bool(first) and all(text in LIST_MARKS for text in first)


def _prose_columns(laid: list[list[tuple[int, int, list[Line]]]], texts: list[list[str]]) -> bool:
    """Every column's cells run to ``PROSE_WORDS`` words or more (their median; a word has two
    letters at least, so a formula's symbols are none): two columns of a
    page's text that the layout model boxed as one table, not a table (whose key column, at
    least, holds short entries)."""
    words: dict[int, list[int]] = {}
    for row, row_texts in zip(laid, texts, strict=True):
        for (start, _end, _runs), text in zip(row, row_texts, strict=True):
            if text.strip():
                words.setdefault(start, []).append(sum(sum(c.isalpha() for c in word) >= 2 for word in text.split()))
    return len(words) >= 2 and all(median(counts) >= PROSE_WORDS for counts in words.values())


def _header_rows(texts: list[list[str]]) -> int:
    """The rows above the first row holding a number, where the body holds numbers; else one."""
    for index, row in enumerate(texts):
        if any(_NUMBER.match(text) for text in row):
            return index if 0 < index <= MAX_HEADER_ROWS else 1
    return 1


def table_data(runs: list[Line], page_height: float, min_columns: int = 2) -> Any | None:
    """docling ``TableData`` of the runs, or None when they do not form a grid that reads as a
    table of ``min_columns`` columns or more."""
    from docling_core.types.doc import BoundingBox, CoordOrigin, TableCell, TableData

    rows = _rows(runs)
    if len(rows) < 2:
        return None
    boundaries = _boundaries(rows)
    if len(boundaries) + 1 < min_columns:
        return None
    rows = _unwrapped(_carried_over(rows, boundaries), boundaries)
    laid = [_cells(row, boundaries) for row in rows]
    texts = [[" ".join(x.text for x in sorted(cell[2], key=lambda x: (x.top, x.left))) for cell in row] for row in laid]
    if _list_marks(laid, texts) or _prose_columns(laid, texts):
        return None
    header = _header_rows(texts)
    table_cells = []
    for r, (row, row_texts) in enumerate(zip(laid, texts, strict=True)):
        for (start, end, cell_runs), text in zip(row, row_texts, strict=True):
            box = BoundingBox(
                l=min(x.left for x in cell_runs), t=min(x.top for x in cell_runs),
                r=max(x.right for x in cell_runs), b=max(x.bottom for x in cell_runs), coord_origin=CoordOrigin.TOPLEFT,
            )
            table_cells.append(
                TableCell(
                    text=text, bbox=box.to_bottom_left_origin(page_height=page_height),
                    start_row_offset_idx=r, end_row_offset_idx=r + 1,
                    start_col_offset_idx=start, end_col_offset_idx=end,
                    column_header=r < header,
                )
            )
    columns = len(boundaries) + 1
    if not reads_as_table(table_cells, len(rows), columns):
        return None
    return TableData(num_rows=len(rows), num_cols=columns, table_cells=table_cells)
