"""A table longer than the chunk budget (docs/ingester.md, "Tables"): split between its rows or cells."""

from __future__ import annotations

import re

import pytest

# "row header, column header = value": how a table's cells reach the chunk text.
CELL = re.compile(r"^(row \d+ name), (\w+) = (row \d+ \w+ value)$")


def _csv(rows: int) -> bytes:
    header = "name,colour,size,weight"
    lines = [header] + [
        f"row {r} name,row {r} colour value,row {r} size value,row {r} weight value" for r in range(rows)
    ]
    return ("\n".join(lines) + "\n").encode()


def _cells(text: str) -> list[str]:
    """A piece's cells: a line per row, its cells separated by ". "."""
    return [part.strip().rstrip(".") for line in text.splitlines() for part in line.split(". ") if part.strip()]


@pytest.mark.parametrize("name, fmt", [("table.csv", "csv")])
def test_a_long_table_is_cut_between_cells_and_each_piece_names_its_row_and_column(
    converter, count_tokens, chunk_size, name, fmt
):
    rows = 60
    chunks = converter.convert(name=name, fmt=fmt, data=_csv(rows)).chunks
    assert len(chunks) > 5  # the table is far over the budget
    seen: list[tuple[str, str, str]] = []
    for chunk in chunks:
        assert "| -" not in chunk.content  # no markdown header fragment pasted before a piece
        assert count_tokens(chunk.content) <= chunk_size
        for cell in _cells(chunk.content):
            match = CELL.match(cell)
            assert match, f"a piece was cut inside a cell: {cell!r} in {chunk.content!r}"
            seen.append(match.groups())
    # Every cell is kept once, in order: each row's three values under their columns.
    expected = [
        (f"row {r} name", column, f"row {r} {column} value")
        for r in range(rows)
        for column in ("colour", "size", "weight")
    ]
    assert seen == expected
