"""Tables drawn with ruling lines (docs/ingester.md, "PDF layout"): found from the page's vector
paths (framed or not), their cells from the grid; a frame, a chart's gridlines and a diagram's
boxes are no table."""

from __future__ import annotations

import io

import pytest

ROWS = [["Species", "March", "April", "May"], ["Curlew", "412", "388", "140"], ["Dunlin", "2310", "1875", "96"]]
FRAMED = "A boxed note: surveys stop when the wind is above force six on the open flats."


def _pdf(*flowables_of) -> bytes:
    """One A4 page of the flowables; ``flowables_of`` gets reportlab's platypus and colors modules."""
    import reportlab.platypus as platypus
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4
    from reportlab.platypus import SimpleDocTemplate

    out = io.BytesIO()
    story = [flowable for make in flowables_of for flowable in make(platypus, colors)]
    SimpleDocTemplate(out, pagesize=A4).build(story)
    return out.getvalue()


def _grid(rows: list[list[str]], *style: tuple) -> object:
    def make(platypus, colors):
        table = platypus.Table(rows)
        table.setStyle(platypus.TableStyle([("GRID", (0, 0), (-1, -1), 0.5, colors.black), *style]))
        return [table]

    return make


def _framed_paragraph(platypus, colors):
    from reportlab.lib.styles import getSampleStyleSheet

    note = platypus.Table([[platypus.Paragraph(FRAMED, getSampleStyleSheet()["BodyText"])]])
    note.setStyle(platypus.TableStyle([("BOX", (0, 0), (-1, -1), 1, colors.black)]))
    return [note]


def _tables(data: bytes) -> list:
    import pypdfium2

    from haiku.core.convert.layout_rulings import ruled_tables

    pdf = pypdfium2.PdfDocument(data)
    try:
        page = pdf[0]
        try:
            return ruled_tables(page)
        finally:
            page.close()
    finally:
        pdf.close()


def _texts(table) -> list[list[str]]:
    return [[cell.text for cell in row] for row in table.data.grid]


def test_a_ruled_grid_is_a_table_with_the_text_of_each_cell():
    [table] = _tables(_pdf(_grid(ROWS)))
    assert _texts(table) == ROWS
    assert table.data.num_rows == 3 and table.data.num_cols == 4


def test_a_cell_without_its_right_hand_rule_spans_the_next_column():
    rows = [["Spring counts", "", ""], ["Curlew", "412", "388"], ["Dunlin", "2310", "1875"]]
    [table] = _tables(_pdf(_grid(rows, ("SPAN", (0, 0), (-1, 0)))))
    [header] = [cell for cell in table.data.table_cells if cell.start_row_offset_idx == 0]
    assert header.text == "Spring counts" and (header.start_col_offset_idx, header.end_col_offset_idx) == (0, 3)
    assert _texts(table)[1:] == rows[1:]


def test_a_frame_around_a_paragraph_is_no_table():
    assert _tables(_pdf(_framed_paragraph)) == []


@pytest.fixture(scope="module")
def beside_a_figure(converter):
    """A ruled grid followed by a figure: the layout model takes the two for one figure."""
    from PIL import Image

    picture = io.BytesIO()
    Image.new("RGB", (480, 240), (120, 170, 110)).save(picture, format="PNG")

    def figure(platypus, colors):
        return [platypus.Spacer(1, 8), platypus.Image(io.BytesIO(picture.getvalue()), width=240, height=120)]

    return converter.read(name="counts.pdf", fmt="pdf", data=_pdf(_grid(ROWS), figure, _framed_paragraph))


def test_the_converter_keeps_a_ruled_grid_as_one_table_and_a_framed_paragraph_as_text(beside_a_figure):
    items = [item for item, _ in beside_a_figure.docling.iterate_items()]
    [table] = [item for item in items if item.label == "table"]
    assert [[cell.text for cell in row] for row in table.data.grid] == ROWS
    assert any(item.label == "text" and FRAMED in item.text for item in items)


def test_a_grid_ruled_between_rows_and_columns_without_a_frame_is_a_table():
    """Manuals rule under each row and between the columns, with no rule at the sides."""
    rows = [["group", "accessible commands"], ["sudo", "execute sudo without their password"],
            ["lpadmin", "add, modify and remove printers"]]

    def make(platypus, colors):
        table = platypus.Table(rows)
        table.setStyle(platypus.TableStyle([
            ("LINEABOVE", (0, 0), (-1, 0), 0.5, colors.black), ("LINEBELOW", (0, 0), (-1, -1), 0.5, colors.black),
            ("LINEAFTER", (0, 0), (0, -1), 0.5, colors.black),
        ]))
        return [table]

    [table] = _tables(_pdf(make))
    assert _texts(table) == rows


def test_a_charts_gridlines_and_a_pipeline_of_boxes_are_no_table():
    from table_samples import diagram

    assert _tables(_pdf(lambda platypus, colors: [diagram()])) == []



def test_a_table_ruled_around_its_header_and_body_only_has_a_row_per_line(converter):
    """A paper's table: a box, a rule under the header and rules between the columns, none
    between the body's rows; a row per line of the body, the numbers in their own columns.
    Beside it a grid ruled under every row keeps a row whose two cells wrap as one row."""
    from reportlab.lib.styles import getSampleStyleSheet

    def make(platypus, colors):
        paper = platypus.Table(ROWS)
        paper.setStyle(platypus.TableStyle([
            ("BOX", (0, 0), (-1, -1), 0.5, colors.black), ("LINEBELOW", (0, 0), (-1, 0), 0.5, colors.black),
            ("LINEAFTER", (0, 0), (-2, -1), 0.5, colors.black),
        ]))
        style = getSampleStyleSheet()["BodyText"]
        wrapped = [[platypus.Paragraph(text, style) for text in row] for row in WRAPPED]
        manual = platypus.Table(wrapped, colWidths=[90, 180])
        manual.setStyle(platypus.TableStyle([("GRID", (0, 0), (-1, -1), 0.5, colors.black)]))
        return [paper, platypus.Spacer(1, 24), manual]

    document = converter.read(name="paper.pdf", fmt="pdf", data=_pdf(make))
    paper, manual = document.docling.tables
    assert [[cell.text for cell in row] for row in paper.data.grid] == ROWS
    assert [[cell.text for cell in row] for row in manual.data.grid] == WRAPPED


WRAPPED = [
    ["group", "accessible commands"],
    ["lpadmin group of printers", "execute commands to add, modify, and remove printers from printer databases"],
    ["sudo", "execute sudo without their password"],
]
