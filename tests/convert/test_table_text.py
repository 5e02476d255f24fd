"""How tables read in chunks, for every format (docs/ingester.md, "Tables").

Each file is made here as a user's tools make it (python-docx, python-pptx,
openpyxl, odfdo) and goes through the real converter.
"""

from __future__ import annotations

import datetime as dt
import io

import pytest

ASSAY_HEADER = [["Sample", "Class1", "", "", "Class2", ""], ["", "A", "B", "C", "D", "E"]]
ASSAY_ROWS = [["R1", "1.2", "", "0.4", "", "7"], ["R2", "", "3.3", "", "2", ""], ["R3", "5", "6", "", "", "9"]]
ASSAY_LINES = [
    "R1, Class1 / A = 1.2. R1, Class1 / C = 0.4. R1, Class2 / E = 7",
    "R2, Class1 / B = 3.3. R2, Class2 / D = 2",
    "R3, Class1 / A = 5. R3, Class1 / B = 6. R3, Class2 / E = 9",
]


def _assay_docx() -> bytes:
    """A lab report: a table whose header is two rows, "Class1" spanning A-C and "Class2" D-E."""
    import docx

    document = docx.Document()
    document.add_heading("Assay results", 1)
    document.add_paragraph("Absorbance of the three samples, by class and band.")
    table = document.add_table(rows=5, cols=6)
    table.style = "Table Grid"
    for r, row in enumerate(ASSAY_HEADER + ASSAY_ROWS):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    table.cell(0, 1).merge(table.cell(0, 3)).text = "Class1"
    table.cell(0, 4).merge(table.cell(0, 5)).text = "Class2"
    table.cell(0, 0).merge(table.cell(1, 0)).text = "Sample"
    document.add_paragraph("Blank cells were below the detection limit.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _assay_pptx() -> bytes:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Assay results"
    table = slide.shapes.add_table(5, 6, Inches(0.5), Inches(2), Inches(9), Inches(3)).table
    for r, row in enumerate(ASSAY_HEADER + ASSAY_ROWS):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    table.cell(0, 1).merge(table.cell(0, 3))
    table.cell(0, 4).merge(table.cell(0, 5))
    table.cell(0, 0).merge(table.cell(1, 0))
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def _assay_html() -> bytes:
    return b"""<html><head><title>Assay results</title></head><body><h1>Assay results</h1>
<table><thead>
<tr><th rowspan="2">Sample</th><th colspan="3">Class1</th><th colspan="2">Class2</th></tr>
<tr><th>A</th><th>B</th><th>C</th><th>D</th><th>E</th></tr></thead><tbody>
<tr><td>R1</td><td>1.2</td><td></td><td>0.4</td><td></td><td>7</td></tr>
<tr><td>R2</td><td></td><td>3.3</td><td></td><td>2</td><td></td></tr>
<tr><td>R3</td><td>5</td><td>6</td><td></td><td></td><td>9</td></tr>
</tbody></table></body></html>"""


def _sales_xlsx() -> bytes:
    """A sales workbook: a sheet keyed by product, where "Widget C" sells every week (the date
    tells its rows apart) and one count carries a note; a second sheet with a two-row header."""
    import openpyxl
    from openpyxl.comments import Comment

    book = openpyxl.Workbook()
    sales = book.active
    sales.title = "Sales 2024"
    sales.append(["Product", "Week of", "Region", "Units", "Note"])
    for product, day, region, units, note in [
        ("Widget A", 3, "North", 12, None),
        ("Widget C", 3, "North", 5, None),
        ("Widget C", 10, "South", 7, "late delivery"),
        ("Widget C", 17, "North", 3, None),
        ("Widget C", 24, "East", 9, None),
        ("Widget C", 31, "West", 4, None),
    ]:
        sales.append([product, dt.date(2024, 1, day), region, units, note])
    sales["D4"].comment = Comment("Recount pending", "Ana")
    targets = book.create_sheet("Targets")
    targets.append(["Region", "Q1", None, "Q2", None])
    targets.append([None, "Plan", "Actual", "Plan", "Actual"])
    targets.merge_cells("B1:C1")
    targets.merge_cells("D1:E1")
    targets.merge_cells("A1:A2")
    targets.append(["North", 100, 90, 110, None])
    targets.append(["South", 80, None, 85, 88])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def _table_chunks(converter, name: str, fmt: str, data: bytes):
    document = converter.convert(name=name, fmt=fmt, data=data)
    return document, [c for c in document.chunks if " = " in c.content]


@pytest.mark.parametrize(
    "name, fmt, make",
    [("assay.docx", "docx", _assay_docx), ("assay.pptx", "pptx", _assay_pptx), ("assay.html", "html", _assay_html)],
)
def test_a_two_row_header_names_each_column_and_empty_cells_are_left_out(converter, name, fmt, make):
    _, chunks = _table_chunks(converter, name, fmt, make())
    text = "\n".join(c.content for c in chunks)
    for line in ASSAY_LINES:
        assert line in text.splitlines(), text
    assert "= ." not in text and not any(line.rstrip().endswith("=") for line in text.splitlines())
    assert "R1, Class1 = " not in text  # "Class1" alone would name three columns


def test_a_sheet_keyed_by_a_repeating_first_column_names_its_rows_by_the_date_too(converter):
    _, chunks = _table_chunks(converter, "sales.xlsx", "xlsx", _sales_xlsx())
    lines = [line for c in chunks for line in c.content.splitlines()]
    assert "Widget C, 2024-01-10, Region = South" in lines[2]
    assert "Widget C, 2024-01-24, Units = 9" in lines[4]
    assert len({line.split(", Region")[0] for line in lines if ", Region" in line}) == 6  # each row its own name
    assert "00:00:00" not in "\n".join(lines)  # a date cell reads as the date it shows
    assert "Note = " in lines[2] and sum("Note = " in line for line in lines) == 1  # empty notes left out


def test_sheet_names_head_their_rows_and_a_cell_comment_follows_its_value(converter):
    document, chunks = _table_chunks(converter, "sales.xlsx", "xlsx", _sales_xlsx())
    by_sheet: dict[tuple[str, ...], str] = {}
    for chunk in chunks:  # a sheet over the chunk budget is cut between its rows
        by_sheet[tuple(chunk.headings)] = "\n".join(filter(None, [by_sheet.get(tuple(chunk.headings)), chunk.content]))
    assert set(by_sheet) == {("Sales 2024",), ("Targets",)}
    assert "Widget C, 2024-01-10, Units = 7 (comment by Ana: Recount pending)" in by_sheet[("Sales 2024",)]
    assert by_sheet[("Targets",)].splitlines() == [
        "North, Q1 / Plan = 100. North, Q1 / Actual = 90. North, Q2 / Plan = 110",
        "South, Q1 / Plan = 80. South, Q2 / Plan = 85. South, Q2 / Actual = 88",
    ]
    assert document.title == "sales.xlsx"  # a sheet's name heads its rows, not the workbook


def test_the_one_sheet_of_a_workbook_with_its_default_name_is_no_heading(converter):
    import openpyxl

    book = openpyxl.Workbook()
    book.active.append(["Bird", "Count"])
    book.active.append(["Avocet", 14])
    out = io.BytesIO()
    book.save(out)
    document, chunks = _table_chunks(converter, "birds.xlsx", "xlsx", out.getvalue())
    assert [c.headings for c in chunks] == [[]] and chunks[0].content == "Avocet, Count = 14"
    assert document.title == "birds.xlsx"


def test_ods_sheet_names_head_their_rows_and_a_cell_comment_follows_its_value(converter):
    from odfdo import Annotation, Document, Table

    document = Document("spreadsheet")  # odfdo's template holds one empty sheet: no heading
    for name, rows in [("Stock", [["Item", "Bin", "Count"], ["Bolt M6", "A1", "40"], ["Bolt M6", "B2", "12"]]),
                       ("Suppliers", [["Name", "City"], ["Acme", "Lyon"]])]:  # fmt: skip
        table = Table(name)
        table.set_values(rows)
        if name == "Stock":
            cell = table.get_cell((2, 2))
            cell.append(Annotation("Counted twice", creator="Ana"))
            table.set_cell((2, 2), cell)
        document.body.append(table)
    out = io.BytesIO()
    document.save(out)
    _, chunks = _table_chunks(converter, "stock.ods", "ods", out.getvalue())
    assert [(c.headings, c.content) for c in chunks] == [
        (["Stock"], "Bolt M6, A1, Count = 40\nBolt M6, B2, Count = 12 (comment by Ana: Counted twice)"),
        (["Suppliers"], "Acme, City = Lyon"),
    ]


def test_a_table_without_a_header_writes_its_rows_and_a_section_row_stands_alone(converter):
    html = b"""<html><body><h1>Contacts</h1>
<table><tr><td>Name</td><td>Ann Lee</td></tr><tr><td>Phone</td><td></td></tr><tr><td>Room</td><td>B12</td></tr></table>
<table><tr><th>Service</th><th>Owner</th></tr><tr><td colspan="2">Storage</td></tr>
<tr><td>Backups</td><td>Ann Lee</td></tr></table></body></html>"""
    _, chunks = _table_chunks(converter, "contacts.html", "html", html)
    text = "\n".join(c.content for c in chunks)
    assert "Name, Ann Lee\nPhone\nRoom, B12" in text
    assert "Storage\nBackups, Owner = Ann Lee" in text


def test_a_title_row_across_the_table_stands_alone_above_its_header(converter):
    """A Word table whose first row is its title, merged across: the row below names the columns
    (Word marks only the first row a header)."""
    import docx

    document = docx.Document()
    document.add_heading("Wader counts", 1)
    table = document.add_table(rows=4, cols=3)
    for r, row in enumerate([["", "", ""], ["Species", "March", "April"], ["Curlew", "412", "388"], ["Dunlin", "2310", ""]]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    table.cell(0, 0).merge(table.cell(0, 2)).text = "Spring counts, north shore"
    out = io.BytesIO()
    document.save(out)
    _, chunks = _table_chunks(converter, "counts.docx", "docx", out.getvalue())
    assert chunks[0].content.splitlines() == [
        "Spring counts, north shore",
        "Curlew, March = 412. Curlew, April = 388",
        "Dunlin, March = 2310",
    ]


def test_a_long_cell_names_no_row():
    """A description beside a repeating first cell would repeat in each sentence of its row."""
    from haiku.core.convert.table_text import Cell, table_lines

    rows = [
        ["Product", "Description", "Units"],
        ["Widget C", "Brushed steel hinge with a soft-close damper", "5"],
        ["Widget C", "Brushed steel hinge without the damper, for doors", "7"],
    ]
    grid = [[Cell(text, r, c, r + 1, c + 1, column_header=r == 0) for c, text in enumerate(row)] for r, row in enumerate(rows)]
    assert table_lines(grid)[0] == (
        "Widget C, Description = Brushed steel hinge with a soft-close damper. Widget C, Units = 5"
    )
