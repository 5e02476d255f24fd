"""Scans of typeset pages as a scanner gives them: a degree askew, JPEG-compressed, at
150-200 dpi, fed sideways (docs/ingester.md, "Scanned pages (OCR)").

Each page is set with reportlab (a heading, two paragraphs, a 7 pt footnote), rendered
at a scanner's resolution, turned a fraction of a degree and saved as JPEG, then
stored as a multi-page TIFF: what a sheet-fed scanner writes. The top of a page is
enough to read; it keeps OCR's time down.
"""

from __future__ import annotations

import io
import re
from collections import Counter

import pytest

pytestmark = pytest.mark.slow

HEADING = "Coastal Bird Survey"
FIRST = [
    "Sanderlings run along the edge of the waves, picking small crustaceans",
    "from the wet sand as each wave draws back. They were counted weekly",
    "in March.",
]
SECOND = [
    "Turnstones flip pebbles and strands of seaweed with their short bills",
    "to find the insects and sandhoppers hidden beneath them.",
]
FOOTNOTE = "Counts were made by two observers using telescopes; totals are the higher of their two counts."


def typeset_scan(*, dpi: int, skew: float, turn: int = 0):
    """The top of an A4 page set in Helvetica, scanned at ``dpi``, ``skew`` degrees askew,
    through JPEG, then turned ``turn`` degrees counter-clockwise as the scanner was fed it."""
    import pypdfium2
    from PIL import Image
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    page = canvas.Canvas(out, pagesize=A4)
    y = A4[1] - 72
    page.setFont("Helvetica-Bold", 18)
    page.drawString(72, y, HEADING)
    y -= 28
    page.setFont("Helvetica", 10)
    for paragraph in (FIRST, SECOND):
        for line in paragraph:
            page.drawString(72, y, line)
            y -= 12
        y -= 10  # the space between paragraphs
    page.setFont("Helvetica", 7)
    page.drawString(72, y - 12, FOOTNOTE)
    page.save()
    pdf = pypdfium2.PdfDocument(out.getvalue())
    image = pdf[0].render(scale=dpi / 72).to_pil().convert("L")
    image = image.crop((0, 0, image.width, round(image.height * 0.35)))
    image = image.rotate(skew, resample=Image.BICUBIC, fillcolor=245)
    jpeg = io.BytesIO()
    image.save(jpeg, format="JPEG", quality=75)
    image = Image.open(io.BytesIO(jpeg.getvalue())).convert("L")
    turns = {90: Image.Transpose.ROTATE_90, 270: Image.Transpose.ROTATE_270}
    return image.transpose(turns[turn]) if turn else image


def words(text: str) -> Counter:
    return Counter(re.findall(r"[a-z]+", text.lower()))


def word_recall(truth: str, read: str) -> float:
    expected = words(truth)
    return sum((expected & words(read)).values()) / sum(expected.values())


TRUTH = " ".join([HEADING, *FIRST, *SECOND, FOOTNOTE])


@pytest.fixture(scope="module")
def scanned(converter):
    """A two-page TIFF: a 200 dpi page 0.6° askew, and a 150 dpi page 0.4° the other way fed
    sideways (turned 270°), converted once for the module."""
    pages = [typeset_scan(dpi=200, skew=0.6), typeset_scan(dpi=150, skew=-0.4, turn=270)]
    out = io.BytesIO()
    pages[0].save(out, format="TIFF", save_all=True, append_images=pages[1:], compression="tiff_deflate")
    return converter.convert(name="survey.tif", fmt="image", data=out.getvalue())


def page_text(document, page: int) -> str:
    return " ".join(item.text for item in document.structure.items if page in item.page_numbers)


def test_a_page_scanned_askew_is_read_word_for_word_spaces_kept(scanned):
    # cut along the page's axes, a long line askew took in the lines above and below it
    assert word_recall(TRUTH, page_text(scanned, 1)) >= 0.95
    assert "small crustaceans" in page_text(scanned, 1)


def test_a_150_dpi_page_fed_sideways_is_read_with_its_spaces(scanned):
    # the recogniser loses the spaces of 150 dpi body text unless the line is enlarged smoothly first
    assert word_recall(TRUTH, page_text(scanned, 2)) >= 0.9
    assert "the wet sand as each wave" in page_text(scanned, 2)


def test_a_typeset_pages_heading_and_paragraphs_are_kept(scanned):
    paragraphs = [item.text for item in scanned.structure.items if item.page_numbers == [1]]
    squeezed = [re.sub(r"\s+", " ", paragraph).strip() for paragraph in paragraphs]
    assert squeezed[:3] == [HEADING, " ".join(FIRST), " ".join(SECOND)]  # "in March." stays in its paragraph
    assert paragraphs[1].count("\n") == 2  # its line breaks kept
    assert scanned.title == HEADING
