"""Scans read column by column with their headings, notes around a sheet's table read as text,
and document properties that name a file or template passed over (docs/ingester.md,
"Scanned pages (OCR)", "Tables", "Titles").

The scan rules are checked on the lines OCR gives (boxes and the thickness of their strokes,
as measured on the published scan of bench/fidelity/linn-cardinal.pdf); the whole scan is read
by ``bench/fidelity.py``. Sheets and presentations are made here as a user's tools make them.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from haiku.core.convert.ocr_headings import body_of, heading_level
from haiku.core.convert.ocr_text import OcrLine, paragraphs

BODY = "the quick brown fox jumps over the lazy dog again and again"


def _line(left: float, top: float, text: str, *, width: float = 800, height: float = 54, stroke: float = 4.0) -> OcrLine:
    return OcrLine(left=left, top=top, right=left + width, bottom=top + height, text=text, score=0.9, stroke=stroke)


def _two_column_page() -> list[OcrLine]:
    """A title across the page, then two columns of body text with a bold heading on each, then a
    bold heading across the page below them (as the Linn product sheet is set)."""
    lines = [_line(300, 0, "The Sequencer", width=1200, height=100)]
    lines.append(_line(300, 150, "Recording", width=300, stroke=6.5))
    lines.append(_line(1290, 150, f"left over {BODY}", stroke=4.0))
    for row in range(1, 7):
        top = 150 + 42 * row
        lines.append(_line(340, top, f"left {row} {BODY}"))
        lines.append(_line(1290, top, f"right {row} {BODY}"))
    lines[-1] = _line(1290, lines[-1].top, f"right 6 {BODY}.")
    lines.append(_line(340, 150 + 42 * 7, f"left 7 {BODY}."))
    lines.append(_line(300, 150 + 42 * 9, "Additional Features", width=500, stroke=6.5))
    lines.append(_line(300, 150 + 42 * 10, f"across the page {BODY} {BODY}", width=1900))
    return lines


def test_a_page_in_two_columns_is_read_left_column_first():
    texts = [p.text for p in paragraphs(_two_column_page())]
    left = next(i for i, t in enumerate(texts) if t.startswith("left 1"))
    right = next(i for i, t in enumerate(texts) if t.startswith("left over"))
    assert left < right  # the old reading joined the rows: "left 1 … right 1 …"
    assert not any("left 1" in t and "right 1" in t for t in texts)
    assert texts[-2:] == ["Additional Features", f"across the page {BODY} {BODY}"]


def test_larger_type_is_a_first_level_heading_and_a_bold_line_a_second():
    found = {p.text: p.level for p in paragraphs(_two_column_page())}
    assert found["The Sequencer"] == 1
    assert found["Recording"] == 2 and found["Additional Features"] == 2
    assert all(level == 0 for text, level in found.items() if BODY in text)


def test_a_thick_line_that_a_sentence_runs_on_into_is_no_heading():
    lines = [_line(300, 42 * i, f"{BODY} {i}") for i in range(6)]
    lines.insert(3, _line(300, 42 * 2.5, "FORWARD, REWIND and LOCATE", width=500, stroke=6.5))
    body = body_of(lines)
    assert body is not None
    assert all(p.level == 0 for p in paragraphs(lines))
    assert heading_level([lines[3]], body, bold_heading=True) == 2  # alone below a sentence's end it would be


def _deaths_xlsx() -> bytes:
    """readxl's example sheet, as its author set it: notes above and below the table, one merged."""
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "arts"
    rows = [
        ["Lots of people"], ["simply cannot resist writing", None, None, None, None, "some notes"],
        ["at", "the", "top", None, "of", "their spreadsheets"], ["or", "merging", None, None, None, "cells"],
        ["Name", "Profession", "Age", "Has kids", "Born", "Died"],
        ["David Bowie", "musician", 69, True, 1947, 2016], ["Carrie Fisher", "actor", 60, True, 1956, 2016],
        ["Harper Lee", "author", 89, False, 1926, 2016], ["Some"],
        [None, "also like to write stuff"],
    ]
    for row in rows:
        sheet.append(row)
    sheet.merge_cells("B4:E4")
    sheet["F2"] = "some notes"
    sheet["F3"] = "their spreadsheets"
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


def test_notes_around_a_sheets_table_read_as_text_and_its_header_names_the_columns(converter):
    document = converter.convert(name="deaths.xlsx", fmt="xlsx", data=_deaths_xlsx())
    text = "\n".join(c.content for c in document.chunks)
    assert "Lots of people" in text.splitlines()
    assert "or merging cells" in text.splitlines()
    assert "David Bowie, Profession = musician. David Bowie, Age = 69" in text
    assert "also like to write stuff" in text
    assert "merging =" not in text and ", the = " not in text  # the old reading named columns by the notes
    assert "Some" in text.splitlines()  # a note below the table, on its own line


def test_a_presentations_template_name_is_no_title(converter):
    from pptx import Presentation

    deck = Presentation()
    deck.core_properties.title = "xinxinli-blue-squares"
    slide = deck.slides.add_slide(deck.slide_layouts[0])
    slide.shapes.title.text = "python 7zip library: py7zr"
    out = io.BytesIO()
    deck.save(out)
    document = converter.convert(name="intro.pptx", fmt="pptx", data=out.getvalue())
    assert document.title == "python 7zip library: py7zr"


def test_a_word_files_placeholder_title_is_no_title(converter):
    import docx

    word = docx.Document()
    word.core_properties.title = "document title"
    word.add_heading("Title 1", 1)
    word.add_paragraph("Lorem ipsum dolor sit amet.")
    out = io.BytesIO()
    word.save(out)
    assert converter.convert(name="example.docx", fmt="docx", data=out.getvalue()).title == "Title 1"


FIDELITY = Path(__file__).resolve().parents[2] / "bench" / "fidelity"


def test_a_slide_title_set_in_two_runs_titles_the_deck_whole():
    """py7zr's published talk: docling reads its first slide's title as two pieces, which are one
    heading (and one chunk heading), as the slide shows it."""
    from haiku.core.config import AppConfig
    from haiku.core.convert.files import FileConverter

    files = FileConverter(AppConfig())
    document = files.convert(FIDELITY / "py7zr-introduction.odp")
    assert files.generate_title(document) == "python 7zip library: py7zr"  # not its template's name
    titles = [item.text for item in document.docling.texts if item.label == "title"]
    assert titles[0] == "python 7zip library: py7zr" and "py7zr" not in titles
    assert ["python 7zip library: py7zr"] in [c.headings for c in files.chunk(document)]  # not ["py7zr"]


@pytest.mark.slow
def test_a_scanned_pdf_keeps_the_headings_ocr_told_by_their_type():
    """A published scan (a page of Huckleberry Finn): its drawn chapter heading, read by OCR, stays a
    heading through the PDF layout step and titles the page."""
    from docling_core.types.doc import DocItemLabel

    from haiku.core.config import AppConfig
    from haiku.core.convert.files import FileConverter

    files = FileConverter(AppConfig())
    document = files.convert(FIDELITY / "huck-finn-c03-29.pdf")
    headings = [t.text for t in document.docling.texts if t.label == DocItemLabel.SECTION_HEADER]
    assert headings and headings[0].startswith("Cha")
    assert files.generate_title(document) == headings[0]


def test_a_cover_too_short_to_measure_is_measured_against_the_documents_body():
    cover = [_line(300, 0, "Adjusted Survival Curves", width=24 * 38, height=70), _line(300, 120, "Jan 2015", width=8 * 24)]
    body = body_of([_line(300, 42 * row, f"{row} {BODY}") for row in range(8)])  # another page's text
    assert [p.level for p in paragraphs(cover)] == [0, 0]  # alone, the cover has no body to compare with
    assert paragraphs(cover, fallback=body)[0].level == 1


def test_large_bold_type_is_a_first_level_heading_and_code_is_none():
    page = [_line(300, 0, "xts: Extensible Time Series", width=27 * 30, height=70, stroke=6.5)]
    page += [_line(300, 100 + 42 * row, f"{row} {BODY}.") for row in range(6)]
    page.append(_line(300, 400, "> fdata <- flchain[flchain$futime >= 7,]", width=700, stroke=6.5))
    page += [_line(300, 460 + 42 * row, f"{row} {BODY}.") for row in range(6)]
    found = {p.text: p.level for p in paragraphs(page)}
    assert found["xts: Extensible Time Series"] == 1  # before: 2, its weight read before its size
    assert all(level == 0 for text, level in found.items() if "fdata" in text)  # typewriter type reads thick


def test_a_title_on_two_lines_in_larger_type_is_one_heading_however_bold_each_reads():
    page = [
        _line(300, 0, "strucchange: An R Package for Testing for Structural", width=52 * 26, height=70, stroke=6.0),
        _line(500, 80, "Change in Linear Regression Models", width=34 * 26, height=70, stroke=5.2),
    ]
    page += [_line(300, 200 + 42 * row, f"{row} {BODY}.") for row in range(8)]
    found = [(p.text, p.level) for p in paragraphs(page)]
    assert found[0] == ("strucchange: An R Package for Testing for Structural\nChange in Linear Regression Models", 1)


def test_a_title_set_close_above_its_author_and_date_is_a_heading_of_its_own():
    page = [
        _line(300, 0, "Discrimination and Calibration", width=27 * 23.7, height=70),  # 27 letters
        _line(400, 75, "Terry Therneau", width=13 * 20, height=56),  # type a little smaller: no new paragraph
        _line(400, 136, "February 6, 2023", width=14 * 19, height=50),
    ]
    body = body_of([_line(300, 42 * row, f"{row} {BODY}") for row in range(8)])  # the next pages' text
    found = [(p.text, p.level) for p in paragraphs(page, fallback=body)]
    assert found[0] == ("Discrimination and Calibration", 1)  # before: one paragraph with the byline, no heading
    assert all(level == 0 for _, level in found[1:])
