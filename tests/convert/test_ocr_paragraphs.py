"""The lines OCR read on a page grouped into paragraphs (docs/ingester.md, "Scanned pages (OCR)").

The boxes are those the detector gave for a typeset page scanned at 200 dpi (a
heading in 18 pt bold, 10 pt body text set at 12 pt leading, 10 pt between
paragraphs): its boxes are taller than the type, so consecutive lines overlap.
"""

from __future__ import annotations

from haiku.core.convert.ocr_text import OcrLine, paragraphs


def line(top: float, bottom: float, text: str, *, left: float = 208, right: float | None = None) -> OcrLine:
    return OcrLine(left, top, right if right is not None else left + 12.8 * len(text), bottom, text, 0.97)


PAGE = [
    line(224, 283, "Coastal Bird Survey", right=689),
    line(290, 339, "Sanderlings run along the edge of the waves, picking small crustaceans"),
    line(327, 372, "from the wet sand as each wave draws back. They were counted weekly"),
    line(370, 402, "in March."),  # no descender: a lower box, the same type
    line(431, 476, "Turnstones flip pebbles and strands of seaweed with their short bills"),
    line(467, 509, "to find the insects and sandhoppers hidden beneath them."),
    line(593, 628, "Counts were made by two observers.", right=208 + 8.7 * 34),
]


def texts(lines: list[OcrLine]) -> list[str]:
    return [paragraph.text.replace("\n", " / ") for paragraph in paragraphs(lines)]


def test_a_heading_its_paragraphs_and_a_footnote_are_each_a_paragraph():
    assert texts(PAGE) == [
        "Coastal Bird Survey",
        "Sanderlings run along the edge of the waves, picking small crustaceans / from the wet sand as each "
        "wave draws back. They were counted weekly / in March.",
        "Turnstones flip pebbles and strands of seaweed with their short bills / to find the insects and "
        "sandhoppers hidden beneath them.",
        "Counts were made by two observers.",
    ]


def test_the_rows_of_a_table_stay_one_paragraph_whatever_their_gaps():
    rows = []
    for top, height, name, count in [(700, 40, "Species", "Count"), (742, 39, "Dunlin", "412"), (784, 41, "Knot", "38")]:
        rows.append(line(top, top + height, name))
        # the count sits far to the right: the row's box is wide, its characters are not
        rows.append(line(top, top + height, count, left=900))
    assert texts(rows) == ["Species Count / Dunlin 412 / Knot 38"]
