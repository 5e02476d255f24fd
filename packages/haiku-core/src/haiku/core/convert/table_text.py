"""How a table reads in a chunk (docs/ingester.md, "Tables").

A table of any format reaches its chunk as sentences, one line per row, each
cell naming its row and its column so that a piece cut from a long table still
says what each value is: ``Widget C, 2024-01-10, Units = 7``. The rules, as a
reader takes a table in:

- a header of several rows names each column by all of them, top to bottom
  ("Class1 / A"), so three columns under one spanning "Class1" stay apart; a
  row belongs to the header while a header cell above spans columns over it or
  spans down into it; a title row above the header (one cell across the
  table) is written as it stands;
- a row is named by its first cell, and by the next cells too when the first
  repeats, until every row has a name of its own (a sheet of "Widget C" rows
  keeps the date that tells them apart), at most ``MAX_KEY_COLUMNS`` short cells;
- an empty cell is left out, and a cell spanning several columns is written once;
- a row that is one cell across the table (a section label inside the table)
  is written as it stands, and a row whose only text is its name is its name;
- a table without a header writes each row's cells in order;
- a cell comment (a spreadsheet note) follows its cell's value in brackets.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

MAX_KEY_COLUMNS = 3  # the most cells a row's name takes
MAX_KEY_CHARS = 40  # a longer cell (a description) names no row: it would repeat in each sentence
MAX_HEADER_ROWS = 3  # a taller "header" is a table of spans, not a header


@dataclass(frozen=True)
class Cell:
    """One cell as the grid holds it: a cell spanning several rows or columns is the same
    ``Cell`` at every position it covers."""

    text: str
    row: int  # where it starts
    col: int
    end_row: int  # one past where it ends
    end_col: int
    column_header: bool = False
    comment: str = ""


def title_rows(grid: Sequence[Sequence[Cell]]) -> int:
    """How many leading rows are one cell across the table (a title above its header)."""
    count = 0
    while count < len(grid) - 1 and _across(grid[count]):
        count += 1
    return count


def header_rows(grid: Sequence[Sequence[Cell]], first: int = 0) -> int:
    """How many rows from ``first`` name the columns. The row below a title row that is marked
    a header is the header, marked or not (a word processor marks a table's first row only)."""
    width = len(grid[0]) if grid else 0
    count = 0
    for index in range(first, min(len(grid) - 1, first + MAX_HEADER_ROWS)):
        row = grid[index]
        if count == 0:
            titled = first > 0 and grid[first - 1][0].column_header
            if not titled and not any(cell.column_header for cell in row if cell.row == index):
                return 0
            count = 1
            continue
        spans_over = any(1 < c.end_col - c.col < width and _text(c) for c in grid[index - 1])
        spans_into = any(first <= c.row < index and c.column_header for c in row)
        if not (spans_over or spans_into):
            break
        count += 1
    return count


def column_names(grid: Sequence[Sequence[Cell]], headers: int) -> list[str]:
    """Each column's name: its header cells' texts, top to bottom, each once."""
    names = []
    for col in range(len(grid[0]) if grid else 0):
        parts: list[str] = []
        for row in grid[:headers]:
            text = " ".join(row[col].text.split())
            if text and (not parts or parts[-1] != text):
                parts.append(text)
        names.append(" / ".join(parts))
    return names


def key_columns(body: Sequence[Sequence[Cell]], width: int) -> int:
    """How many leading columns name a row: the first, and the next ones while rows share a name
    and the next column's cells are short enough to repeat in every sentence of their row."""
    limit = max(1, min(MAX_KEY_COLUMNS, width - 1))
    keys = 1
    while keys < limit:
        names = [tuple(_text(cell) for cell in row[:keys]) for row in body if _has_values(row, keys)]
        if len(set(names)) == len(names) or any(len(_text(row[keys])) > MAX_KEY_CHARS for row in body):
            break
        keys += 1
    return keys


def table_lines(grid: Sequence[Sequence[Cell]]) -> list[str]:
    """The table as the lines a chunk holds, one per row that has text."""
    if not grid or not grid[0]:
        return []
    width = len(grid[0])
    titles = title_rows(grid)
    headers = header_rows(grid, titles)
    lines = [_with_comment(row[0]) for row in grid[:titles]]
    if headers == 0 or width == 1:
        return lines + _plain_lines(grid[titles:], headers)
    names = column_names(grid[titles:], headers)
    body = grid[titles + headers :]
    keys = key_columns(body, width)
    for row in body:
        if _across(row):
            lines.append(_with_comment(row[0]))
            continue
        label = ", ".join(dict.fromkeys(t for t in (_text(c) for c in row[:keys]) if t))
        seen: set[int] = {id(cell) for cell in row[:keys]}
        sentences = []
        for col in range(keys, width):
            cell = row[col]
            if id(cell) in seen or not _text(cell):
                continue
            seen.add(id(cell))
            sentences.append(_sentence(label, names[col], _with_comment(cell)))
        comments = [f"({c.comment})" for c in dict.fromkeys(row[:keys]) if c.comment]
        line = ". ".join(sentences) or label
        if line:
            lines.append(" ".join([line, *comments]))
    return lines


def _plain_lines(grid: Sequence[Sequence[Cell]], headers: int) -> list[str]:
    """A table without a header, or of one column: each row's cells in order, under the header if any."""
    name = ", ".join(column_names(grid, headers)) if headers else ""
    lines = []
    for row in grid[headers:]:
        texts = [_with_comment(c) for c in dict.fromkeys(row) if _text(c)]
        if texts:
            lines.append(f"{name} = {', '.join(texts)}" if name else ", ".join(texts))
    if not lines and headers:  # a table that is all header
        lines = [", ".join(t for t in column_names(grid, headers) if t)]
    return [line for line in lines if line]


def _sentence(label: str, column: str, value: str) -> str:
    if label and column:
        return f"{label}, {column} = {value}"
    if label or column:
        return f"{label or column} = {value}"
    return value


def _text(cell: Cell) -> str:
    return " ".join(cell.text.split())


def _with_comment(cell: Cell) -> str:
    return f"{_text(cell)} ({cell.comment})" if cell.comment else _text(cell)


def _has_values(row: Sequence[Cell], keys: int) -> bool:
    return not _across(row) and any(_text(cell) for cell in row[keys:] if cell not in row[:keys])


def _across(row: Sequence[Cell]) -> bool:
    """A row that is one cell spanning the whole table (a section label inside it)."""
    return len(row) > 1 and all(cell is row[0] for cell in row) and bool(_text(row[0]))


def grid_of(
    rows: int, cols: int, cells: Sequence[Any], text_of: Callable[[Any], str],
    comments: dict[tuple[int, int], str] | None = None,
) -> list[list[Cell]]:  # fmt: skip
    """The grid of a docling table's cells (``TableData.table_cells``), with each cell's text
    from ``text_of`` (a rich cell is serialized) and the comments by the (row, column) of
    the cell they were written on."""
    grid: list[list[Cell | None]] = [[None] * cols for _ in range(rows)]
    empty: dict[tuple[int, int], Cell] = {}
    for source in cells:
        row, col = source.start_row_offset_idx, source.start_col_offset_idx
        end_row = min(max(source.end_row_offset_idx, row + 1), rows)
        end_col = min(max(source.end_col_offset_idx, col + 1), cols)
        cell = Cell(
            text=text_of(source), row=row, col=col, end_row=end_row, end_col=end_col,
            column_header=bool(source.column_header),
            comment=(comments or {}).get((row, col), ""),
        )  # fmt: skip
        for r in range(row, end_row):
            for c in range(col, end_col):
                grid[r][c] = cell
    for r, row_cells in enumerate(grid):
        for c, cell in enumerate(row_cells):
            if cell is None:
                row_cells[c] = empty.setdefault((r, c), Cell("", r, c, r + 1, c + 1))
    return grid  # type: ignore[return-value]
