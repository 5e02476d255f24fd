"""PDF headings and titles read as a careful reader reads them (docs/ingester.md, "PDF layout"
and "Titles"), on published manuals and a paper: type sizes from the text layer, title pages,
chapter labels, and the lines set like headings that are none (dates, callouts, list items,
release lines, table-of-contents entries, footnote markers, equations, a cover's words)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from haiku.core.convert.layout_headings import HeadingRule, chapter_label, heading_shaped
from haiku.core.convert.layout_levels import numbering_depth
from haiku.core.convert.layout_lines import Line
from haiku.core.convert.titles import cover_word, plausible_title

REPO = Path(__file__).resolve().parents[2]
FIDELITY = REPO / "bench" / "fidelity"  # Debian manuals' page cuts (their README gives each licence)
REAL = Path(__file__).parent / "real_pdfs"


def _read(converter, path: Path):
    return converter.read(name=path.name, fmt="pdf", data=path.read_bytes())


def _headings(document) -> list[tuple[str, int]]:
    return [(item.text, item.level) for item, _ in document.docling.iterate_items() if item.label == "section_header"]


@pytest.fixture(scope="module")
def faq(converter):
    return _read(converter, FIDELITY / "debian-faq-p1-11.pdf")


@pytest.fixture(scope="module")
def devref(converter):
    return _read(converter, FIDELITY / "developers-reference-p1-14.pdf")


@pytest.mark.slow
def test_a_manuals_headings_are_its_title_chapter_and_sections_at_their_levels(faq, converter):
    headings = _headings(faq)
    texts = [text for text, _ in headings]
    assert "May 31, 2022" not in texts  # the title page's date
    assert headings[0] == ("The Debian GNU/Linux FAQ", 1)  # the title page's title, above all else
    assert converter.title(faq) == "The Debian GNU/Linux FAQ"
    # a heading wrapped over three lines whose boxes are 12, 14 and 11 points tall is one heading
    wrapped = [t for t in texts if t.startswith("1.5 ")]
    assert len(wrapped) == 1 and wrapped[0].endswith("over some other distribution?")
    assert "other distribution?" not in texts
    # the chapter's label joins its title, above the chapter's sections
    levels = dict(headings)
    assert levels["Chapter 1 Definitions and overview"] < levels["1.1 What is this FAQ?"]


@pytest.mark.slow
def test_spelled_chapter_labels_join_and_release_lines_are_no_headings(devref):
    levels = dict(_headings(devref))
    assert not {"ONE", "TWO", "Release 12.18", "Developer's Reference Team"} & set(levels)
    assert levels["CHAPTER TWO APPLYING TO BECOME A MEMBER"] < levels["2.1 Getting started"]


@pytest.mark.slow
def test_callout_labels_and_a_title_pages_author_are_no_headings(converter):
    texts = {text for text, _ in _headings(_read(converter, FIDELITY / "debmake-doc-p1-14.pdf"))}
    assert not {"Tip", "Note", "Caution", "Osamu Aoki", "May 9, 2022"} & texts
    assert {"Chapter 1 Overview", "2.1 People around Debian", "2.6 Help resources"} <= texts


@pytest.mark.slow
def test_a_list_item_is_no_heading_nor_a_title(converter):
    document = _read(converter, FIDELITY / "debian-reference-p37-40.pdf")
    assert [text for text, _ in _headings(document)] == [
        "1.2.4 Control of permissions for newly created files: umask",
        "1.2.5 Permissions for groups of users (group)",
        "1.2.6 Timestamps",
    ]
    assert not converter.title(document).startswith("•")


@pytest.mark.slow
def test_a_papers_equations_contents_and_authors_are_no_headings(converter):
    # the equations' boxes are tall, the contents' entries bold, the authors end in footnote marks
    document = _read(converter, REAL / "crc-doc-pages-1-4.pdf")
    assert _headings(document) == [
        ("Everything we know about CRC but afraid to forget", 1),
        ("Contents", 2),
        ("3 CRC tricks and tips", 2),
        ("3.1 Incremental CRC computation", 3),
        ("3.2 Changing initial CRC value", 3),
    ]


def _booklet(*, cover: str) -> bytes:
    """A cover with one large word, then a page with the booklet's title and its text; the
    headings drawn at 1 point and scaled by the text matrix, as some producers write them."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=A4)
    pdf.setTitle(cover)  # a document property no better than the cover
    pdf.setFont("Helvetica-Bold", 40)
    pdf.drawString(150, 500, cover)
    pdf.showPage()

    def scaled(text: str, size: float, y: float, font: str = "Helvetica-Bold") -> None:
        line = pdf.beginText()
        line.setFont(font, 1)
        line.setTextTransform(size, 0, 0, size, 72, y)
        line.textOut(text)
        pdf.drawText(line)

    scaled("Wading Birds of the Estuary", 22, 760)
    y = 720
    for section in ("Herons on the mudflats", "Egrets at the roost"):
        scaled(section, 15, y)
        y -= 22
        for _ in range(8):
            scaled("Counts were made at low water from the sea wall, with the tide table to hand.", 10, y, "Helvetica")
            y -= 13
        y -= 14
    pdf.showPage()
    pdf.save()
    return out.getvalue()


@pytest.mark.slow
def test_a_cover_word_is_no_title_and_scaled_type_reads_at_its_drawn_size(converter):
    document = converter.read(name="booklet.pdf", fmt="pdf", data=_booklet(cover="Front cover"))
    assert converter.title(document) == "Wading Birds of the Estuary"
    assert [text for text, _ in _headings(document)] == [
        "Wading Birds of the Estuary", "Herons on the mudflats", "Egrets at the roost"
    ]


def _memo() -> bytes:
    """Body-size bold heads above their paragraphs, and a contents row of the same bold type."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=A4)
    pdf.setFont("Helvetica-Bold", 10)
    pdf.drawString(72, 780, "Survey schedule")
    pdf.drawRightString(520, 780, "2")
    y = 740
    for head in ("Survey schedule", "Equipment list"):
        pdf.setFont("Helvetica-Bold", 10)
        pdf.drawString(72, y, head)
        y -= 14
        pdf.setFont("Helvetica", 10)
        for _ in range(6):
            pdf.drawString(72, y, "Each observer walks the same transect at dawn and notes every bird seen or heard.")
            y -= 13
        y -= 16
    pdf.showPage()
    pdf.save()
    return out.getvalue()


@pytest.mark.slow
def test_a_bold_line_above_a_paragraph_heads_it_and_a_contents_row_does_not(converter):
    document = converter.read(name="memo.pdf", fmt="pdf", data=_memo())
    assert [text for text, _ in _headings(document)] == ["Survey schedule", "Equipment list"]


def test_lines_set_like_headings_that_are_none():
    for text in ("May 31, 2022", "2023-03-06", "13 July 2019", "Tip", "Note:", "Caution", "• Name of the file",
                 "Release 12.18", "Version 1.0.8 of 13 July 2019", "Release 3.19.0 11 Apr 2022",
                 "Copyright © 2000-2022 AUTHORS", "© 2019 Julian Seward", "Front cover",
                 "Issue 12", "제1695호", "Page 3"):
        assert not heading_shaped(text), text
    for text in ("Notes", "Warning signs", "March of the penguins", "1 Introduction", "Covering letters",
                 "Versioning rules", "2.3 Registering as a Debian member", "Copyright", "Copyright and licence",
                 "Version 2 of the protocol", "Release notes"):
        assert heading_shaped(text), text


def test_chapter_labels_and_their_numbering():
    assert [chapter_label(t) for t in ("Chapter 1", "CHAPTER", "ONE", "Part II", "Chapter 1 Overview")] == [
        True, True, True, True, False]
    assert numbering_depth("Chapter 1 Definitions and overview") == 1
    assert numbering_depth("CHAPTER TWO APPLYING TO BECOME A MEMBER") == 1


def test_a_title_is_never_a_cover_word_an_issue_number_or_a_bullet():
    assert [cover_word(t) for t in ("Front cover", "Back Cover", "Issue 7", "No. 12", "제1695호", "Cover art")] == [
        True, True, True, True, True, False]
    assert plausible_title("• Overview") is None and plausible_title("Front cover") is None
    assert plausible_title("Wading Birds") == "Wading Birds"


def _page(page_no: int, title: str, body_lines: int) -> list[Line]:
    body = [Line(page_no, "Counts were made at low water from the sea wall.", 72, 200 + 13 * i, 500, 210 + 13 * i,
                 size=10.0) for i in range(body_lines)]
    return [Line(page_no, title, 72, 100, 400, 124, size=24.0, bold=True), *body]


def test_a_title_page_has_one_heading_and_pages_after_it():
    booklet = HeadingRule([*_page(1, "Wading Birds", 2), *_page(2, "Herons", 30)], [])
    assert booklet.title_page == 1
    assert booklet.level(Line(1, "Julian Seward", 72, 140, 300, 156, size=17.0), in_title_region=False) is None
    assert booklet.level(_page(1, "Wading Birds", 0)[0], in_title_region=False) == 1
    memo = HeadingRule(_page(1, "Wading Birds", 2), [])  # one page: its heading is its own, not a title page's
    assert memo.title_page is None
