"""Tables of a PDF read as their reader reads them (docs/ingester.md, "PDF layout"): a results
table without column rules keeps each cell apart (not merged across columns, not split across
rows), and a figure's labels and gridlines stay text, never a table."""

from __future__ import annotations

import pytest
from table_samples import FIGURE_LABELS, RESULTS, TIGHT, booktabs_pdf, results_pdf

from haiku.core.convert.layout_lines import Line


@pytest.fixture(scope="module")
def paper(converter):
    return converter.read(name="results.pdf", fmt="pdf", data=results_pdf())


def _grid(table) -> list[list[str]]:
    return [[cell.text for cell in row] for row in table.data.grid]


def test_a_results_table_without_column_rules_keeps_its_cells(paper):
    [table] = paper.docling.tables
    grid = _grid(table)
    assert grid[0] == ["", "Collection A", "Collection A", "Collection B", "Collection B"]
    assert grid[1] == ["Model", "nDCG@10", "Recall@100", "nDCG@10", "Recall@100"]
    # the wrapped model name is one cell of its row, beside its numbers
    assert grid[2:] == [[cell.replace("\n", " ") for cell in row] for row in RESULTS]
    assert [row[1].column_header for row in table.data.grid] == [True, True, False, False, False, False]


def test_a_figures_labels_and_gridlines_are_text_not_a_table(paper):
    tables = " ".join(cell.text for table in paper.docling.tables for row in table.data.grid for cell in row)
    texts = " ".join(item.text for item in paper.docling.texts)
    for label in FIGURE_LABELS:
        assert label not in tables and label in texts


def test_a_table_set_tight_between_three_rules_is_read_from_its_gaps(converter):
    """Booktabs: no column rules and columns five points apart, which the text layer runs
    together ("Params MNLI QQP SST-2 Avg.") and the layout model does not box."""
    document = converter.read(name="booktabs.pdf", fmt="pdf", data=booktabs_pdf())
    [table] = document.docling.tables
    assert _grid(table) == TIGHT


def test_scattered_words_or_a_list_in_a_table_region_are_no_table():
    """The labels of a chart that the layout model boxed as a table: tick labels down the
    side, years along the foot, curve names here and there; and a list it boxed, whose
    bullets stand a column's gap before their text."""
    from haiku.core.convert.layout_tables import table_data

    def at(text: str, left: float, top: float) -> Line:
        return Line(1, text, left, top, left + 5.0 * len(text), top + 6.4)

    labels = [at(str(v), 92, 242 + 36 * i) for i, v in enumerate(range(100, -1, -20))]
    labels += [at(str(2016 + j), 112 + 54 * j, 431) for j in range(8)]
    labels += [at("peak", 458, 269), at("dense", 278, 289), at("baseline", 138, 319), at("sparse", 388, 349),
               at("hybrid", 198, 379), at("Thdd", 328, 399)]
    assert table_data(labels, 842.0) is None

    items = ["cat(1) concatenates files", "tac(1) outputs in reverse", "cut(1) selects parts of lines"]
    runs = []
    for i, item in enumerate(items):
        top = 440.0 + 15.6 * i
        runs += [Line(1, "-", 65.2, top, 69.0, top + 9.0), Line(1, item, 75.0, top, 75.0 + 4.5 * len(item), top + 9.0)]
    assert table_data(runs, 842.0) is None
