"""Heading levels of a laid-out PDF settled over the document (docs/ingester.md, "PDF layout"):
numbering depth in a file without an outline, and levels compacted to 1, 2, 3."""

from __future__ import annotations

import io

import pytest

from haiku.core.convert.layout_levels import numbering_depth, settled_levels

BODY = (
    "Observers count the birds that roost on the shingle while the water is high, because the flocks "
    "are packed close together and move little until the tide turns again. "
) * 3
# (heading, font size): the second chapter is set smaller than the first, nearer its sections' size
HEADINGS = [("1 Counting at high tide", 18), ("1.1 Choosing a vantage point", 13), ("1.2 Flock size estimates", 13),
            ("2 Recording the flocks", 15), ("2.1 Notebooks", 13), ("3 Results by site", 18)]


def _manual() -> bytes:
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.platypus import Paragraph, SimpleDocTemplate

    body = ParagraphStyle("body", fontName="Helvetica", fontSize=10, leading=13, spaceAfter=6)
    story = [Paragraph("Shorebird Survey Manual", ParagraphStyle("t", fontName="Helvetica-Bold", fontSize=24, leading=30))]
    for text, size in HEADINGS:
        style = ParagraphStyle(text, fontName="Helvetica-Bold", fontSize=size, leading=size * 1.3, spaceBefore=6)
        story += [Paragraph(text, style), Paragraph(BODY, body)]
    out = io.BytesIO()
    SimpleDocTemplate(out, pagesize=A4).build(story)
    return out.getvalue()


@pytest.fixture(scope="module")
def levels(converter) -> dict[str, int]:
    document = converter.read(name="manual.pdf", fmt="pdf", data=_manual()).docling
    return {item.text: item.level for item in document.texts if item.label == "section_header"}


def test_chapters_share_a_level_above_their_sections_whatever_their_size(levels):
    assert levels["Shorebird Survey Manual"] == 1
    assert {levels[text] for text, _ in HEADINGS if "." not in text.split()[0]} == {2}
    assert {levels[text] for text, _ in HEADINGS if "." in text.split()[0]} == {3}


def test_numbering_depth():
    assert [numbering_depth(t) for t in ("3 Pointers", "3.2. Arrays", "3.2.1 Low-level summary", "Appendix A Copying",
                                         "A.1 GNU Free Documentation License", "Concept Index", "A note")] == [
        1, 2, 3, 1, 2, None, None]


def test_levels_in_use_are_compacted_without_gaps():
    assert settled_levels([("Title", 1), ("Intro", 3), ("Detail", 6), ("More", 3)], by_numbering=False) == [1, 2, 3, 2]


def test_an_unnumbered_heading_joins_the_numbered_level_at_or_above_it():
    headings = [("Manual", 1), ("1 Overview", 3), ("1.1 IDL", 4), ("2 Syntax", 2), ("Grammar notes", 3), ("2.1 Lexing", 4)]
    assert settled_levels(headings, by_numbering=True) == [1, 2, 3, 2, 2, 3]
    assert settled_levels(headings, by_numbering=False) == [1, 3, 4, 2, 3, 4]


def test_sections_numbered_in_roman_read_as_an_outline():
    # a physics journal's heads, all set bold at one size: the numbering alone tells their depth
    headings = [("Sample Title", 1), ("I. INTRODUCTION", 2), ("A. Formatting", 2), ("1. Citations", 2), ("a. Run in", 2),
                ("II. METHODS", 2), ("B. Samples", 2), ("C. Results", 2), ("Appendix A: Proofs", 2)]
    assert settled_levels(headings, by_numbering=True) == [1, 2, 3, 4, 5, 2, 3, 3, 2]
    # one roman-numbered head makes no outline: "A." and "1." keep their usual reading
    assert settled_levels([("I. Overview", 2), ("1. Scope", 2), ("1.1 Terms", 3), ("2. Use", 2)], by_numbering=True) == [
        1, 1, 2, 1]
