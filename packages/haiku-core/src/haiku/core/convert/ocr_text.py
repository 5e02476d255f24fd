"""The lines OCR reads on a page, as paragraphs of lines (docs/ingester.md, "Scanned pages (OCR)").

The detector boxes a page's text line by line (and a line with a wide gap in
it as several boxes). Boxes that stand side by side on one row are one line,
read left to right; a paragraph is a run of lines one under the other, broken
where the gap above a line is over ``PARAGRAPH_GAP`` of its height or where
the type size changes (a line over ``SIZE_STEP`` times as tall as the one
above, or under its inverse: a heading over its text). Each
paragraph becomes one text item whose text keeps its line breaks, with one
box per line (``charspan`` the line's place in the text), so a chunk keeps
the page's lines and ``visualize`` draws them, not the whole page.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MIN_SCORE = 0.5  # the recogniser's confidence below which a line is dropped
PARAGRAPH_GAP = 0.8  # a gap above a line over this share of its height starts a paragraph
SIZE_STEP = 1.35  # a line this much taller or shorter than the one above starts a paragraph
SAME_ROW = 0.5  # boxes whose vertical centres lie within this share of a line's height share a row


@dataclass(frozen=True)
class OcrLine:
    """One box the detector found and the text read in it, in pixels of the image read
    (top-left origin); ``score``: the recogniser's confidence."""

    left: float
    top: float
    right: float
    bottom: float
    text: str
    score: float

    @property
    def height(self) -> float:
        return max(self.bottom - self.top, 1.0)


@dataclass(frozen=True)
class Paragraph:
    """Lines of a paragraph in reading order; each line's box and text."""

    lines: list[OcrLine]

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)


def readable(lines: list[OcrLine]) -> list[OcrLine]:
    """The lines read with text at ``MIN_SCORE`` or over."""
    return [line for line in lines if line.text and line.score >= MIN_SCORE]


def rows(lines: list[OcrLine]) -> list[OcrLine]:
    """The boxes merged into the page's lines, top to bottom: boxes that stand side by side
    on one row are one line, their texts joined by a space, left to right."""
    merged: list[list[OcrLine]] = []
    for box in sorted(readable(lines), key=lambda line: (line.top + line.bottom) / 2):
        centre = (box.top + box.bottom) / 2
        if merged:
            last = merged[-1]
            last_centre = sum((b.top + b.bottom) / 2 for b in last) / len(last)
            if abs(centre - last_centre) <= SAME_ROW * min(box.height, last[0].height):
                last.append(box)
                continue
        merged.append([box])
    joined = []
    for row in merged:
        row.sort(key=lambda b: b.left)
        joined.append(
            OcrLine(
                left=min(b.left for b in row), top=min(b.top for b in row),
                right=max(b.right for b in row), bottom=max(b.bottom for b in row),
                text=" ".join(b.text for b in row), score=min(b.score for b in row),
            )
        )  # fmt: skip
    return joined


def paragraphs(lines: list[OcrLine]) -> list[Paragraph]:
    """The page's lines as paragraphs in reading order."""
    found: list[list[OcrLine]] = []
    previous: OcrLine | None = None
    for line in rows(lines):
        step = line.height / previous.height if previous is not None else 1.0
        if (
            previous is None
            or line.top - previous.bottom > PARAGRAPH_GAP * line.height
            or not 1 / SIZE_STEP <= step <= SIZE_STEP
        ):
            found.append([])
        found[-1].append(line)
        previous = line
    return [Paragraph(lines) for lines in found]


def add_paragraphs(document: Any, page_no: int, page_height: float, scale: float, found: list[Paragraph]) -> None:
    """Each paragraph as a text item of ``document`` on ``page_no``, a box per line;
    ``scale``: image pixels per page unit (page points for a PDF, pixels for an image)."""
    from docling_core.types.doc import BoundingBox, CoordOrigin, DocItemLabel, ProvenanceItem

    for paragraph in found:
        provs, start = [], 0
        for line in paragraph.lines:
            box = BoundingBox(
                l=line.left / scale, t=line.top / scale, r=line.right / scale, b=line.bottom / scale,
                coord_origin=CoordOrigin.TOPLEFT,
            )  # fmt: skip
            span = (start, start + len(line.text))
            provs.append(ProvenanceItem(page_no=page_no, bbox=box.to_bottom_left_origin(page_height), charspan=span))
            start = span[1] + 1
        item = document.add_text(label=DocItemLabel.TEXT, text=paragraph.text, prov=provs[0])
        item.prov.extend(provs[1:])
