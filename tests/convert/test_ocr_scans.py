"""Scans read as a reader sees them: turned pages, every page of a TIFF, small print,
lines and paragraphs kept, unreadable pages reported (docs/ingester.md, "Scanned pages (OCR)").

The pages are A4 scans made here: text drawn with PIL at a scanner's resolution,
turned and saved as a scanned PDF (no text layer) or a multi-page TIFF.
"""

from __future__ import annotations

import io

import pytest

DPI = 200
FIRST = ["Sanderlings run along the edge of the waves", "picking crustaceans from the wet sand."]
SECOND = ["Turnstones flip pebbles with their bills", "to find the insects hidden beneath them."]


def scanned_page(paragraphs: list[list[str]], *, points: float = 12, turn: int = 0, dpi: int = DPI):
    """An A4 page at ``dpi`` with each paragraph's lines at ``points`` type, a blank line between
    paragraphs, turned ``turn`` degrees counter-clockwise as a scanner fed it."""
    from PIL import Image, ImageDraw, ImageFont

    page = Image.new("L", (round(8.27 * dpi), round(11.69 * dpi)), 248)
    draw = ImageDraw.Draw(page)
    size = round(points * dpi / 72)
    font = ImageFont.load_default(size=size)
    y = dpi
    for paragraph in paragraphs:
        for line in paragraph:
            draw.text((dpi, y), line, fill=20, font=font)
            y += round(size * 1.5)
        y += size * 2
    turns = {90: Image.Transpose.ROTATE_90, 180: Image.Transpose.ROTATE_180, 270: Image.Transpose.ROTATE_270}
    return page.transpose(turns[turn]) if turn else page


def saved(pages: list, fmt: str, dpi: int = DPI) -> bytes:
    out = io.BytesIO()
    pages[0].save(out, format=fmt, save_all=True, append_images=pages[1:], resolution=float(dpi))
    return out.getvalue()


def text_of(document) -> str:
    return " ".join(chunk.content for chunk in document.chunks)


@pytest.mark.slow
def test_pages_scanned_sideways_and_upside_down_are_read_the_right_way_up(converter):
    sentences = ["Oystercatchers probe the mud", "Curlews call across the saltmarsh", "Godwits feed in the shallows"]
    pages = [scanned_page([[s]], turn=turn) for s, turn in zip(sentences, (90, 180, 270), strict=True)]
    document = converter.convert(name="turned.pdf", fmt="pdf", data=saved(pages, "PDF"), pages=False)
    read = {tuple(item.page_numbers): item for item in document.structure.items}
    squeezed = [read[(page,)].text.replace(" ", "") for page in (1, 2, 3)]  # OCR may drop a space
    assert squeezed == [sentence.replace(" ", "") for sentence in sentences]
    # a sideways line is boxed on the page as it is stored, where it runs down the page
    sideways = read[(1,)].boxes[0]
    assert sideways.bottom - sideways.top > 3 * (sideways.right - sideways.left)


@pytest.mark.slow
def test_every_page_of_a_multi_page_tiff_is_read(converter):
    data = saved([scanned_page([FIRST]), scanned_page([SECOND])], "TIFF")
    document = converter.convert(name="two-pages.tif", fmt="image", data=data)
    pages = {page: " ".join(c.content for c in document.chunks if page in c.page_numbers) for page in (1, 2)}
    assert "Sanderlings run along" in pages[1] and "Turnstones flip pebbles" in pages[2]
    assert [image.page for image in document.structure.pages] == [1, 2]  # for visualize to draw on


@pytest.mark.slow
def test_ocr_keeps_line_and_paragraph_breaks_and_boxes_each_line(converter):
    data = saved([scanned_page([FIRST, SECOND])], "PNG")
    document = converter.convert(name="notes.png", fmt="image", data=data)
    assert "edge of the waves  \npicking" in text_of(document)  # markdown's hard line break
    assert [p.strip() for p in document.content.split("\n\n")][:2] == [
        "  \n".join(FIRST), "  \n".join(SECOND),
    ]  # fmt: skip
    boxes = [box for chunk in document.chunks for box in chunk.boxes]
    assert len(boxes) == 4  # a box per line, not the page
    width = round(8.27 * DPI)
    assert all(box.bottom - box.top < 60 and box.right - box.left < 0.8 * width for box in boxes)
    (image,) = document.structure.pages  # the scan is its own page image, the boxes on it
    assert all(0 <= box.left and box.right * image.scale <= image.width for box in boxes)


@pytest.mark.slow
def test_a_scans_larger_first_line_is_a_paragraph_of_its_own(converter):
    from PIL import ImageDraw, ImageFont

    page = scanned_page([FIRST])  # the heading set close above the text, as a line above a line
    ImageDraw.Draw(page).text((DPI, DPI - 80), "Shorebird Survey", fill=20, font=ImageFont.load_default(size=64))
    document = converter.convert(name="survey.png", fmt="image", data=saved([page], "PNG"), pages=False)
    assert document.content.split("\n\n")[0].strip().rstrip(".") == "Shorebird Survey"


@pytest.mark.slow
def test_small_print_of_a_scanned_pdf_is_read(converter):
    small = "Counts were made weekly between October and March by two observers."
    page = scanned_page([FIRST, [small]], points=7, dpi=300)
    document = converter.convert(name="small.pdf", fmt="pdf", data=saved([page], "PDF", dpi=300), pages=False)
    words = set(small.lower().rstrip(".").split())
    read = set(text_of(document).lower().replace(".", " ").split())
    assert len(words & read) >= 0.8 * len(words)


@pytest.mark.slow
def test_a_page_yielding_almost_no_text_is_reported_unreadable_and_a_blank_one_is_not(converter, capsys):
    from PIL import Image, ImageDraw

    smudge = Image.new("L", (1654, 2339), 248)
    ImageDraw.Draw(smudge).ellipse((400, 600, 1200, 1400), fill=90)  # a stain, no text
    blank = Image.new("L", (1654, 2339), 248)
    data = saved([scanned_page([FIRST]), smudge, blank], "PDF")
    document = converter.convert(name="stained.pdf", fmt="pdf", data=data, pages=False)
    assert document.metadata["unreadable_pages"] == [2]
    assert "page unreadable by OCR" in capsys.readouterr().out + capsys.readouterr().err
