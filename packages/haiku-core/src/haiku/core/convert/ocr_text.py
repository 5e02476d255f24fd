"""The lines OCR reads on a page, as paragraphs of lines (docs/ingester.md, "Scanned pages (OCR)").

The detector boxes a page's text line by line (and a line with a wide gap in
it as several boxes). A page set in columns is read column by column
(``ocr_columns``); boxes that stand side by side on one row of a column are one line,
read left to right; a paragraph is a run of lines one under the other, broken
where the gap above a line is wider than the page's ordinary gap between
lines by over ``PARAGRAPH_GAP`` of its height (the detector's boxes are taller
than the type, so on a tightly set page consecutive boxes overlap and the
ordinary gap is below nothing), or where the type size changes: a line
whose characters are over ``SIZE_STEP`` times as wide as the line above's,
or under its inverse, and whose box is taller or shorter with them (a heading over its text; a box's
height alone misleads: a short last line without descenders, "March.", has a
low box in the type of the line above it and stays in its paragraph). Each
paragraph becomes one text item whose text keeps its line breaks, with one
box per line (``charspan`` the line's place in the text), so a chunk keeps
the page's lines and ``visualize`` draws them, not the whole page; a paragraph
set in larger or bold type is a heading (``ocr_headings``).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from haiku.core.convert.ocr_columns import reading_regions, row_groups
from haiku.core.convert.ocr_headings import HEADING_LINES, Body, body_of, bold, heading_level, larger_type
from haiku.core.convert.ocr_lines import OcrLine

MIN_SCORE = 0.5  # the recogniser's confidence below which a line is dropped
PARAGRAPH_GAP = 0.5  # a gap above a line over the ordinary one by this share of its height starts a paragraph
ORDINARY_GAP = 0.5  # the ordinary gap between lines is taken as at most this share of a line's height
SIZE_STEP = 1.3  # a line whose characters are this much wider or narrower than above starts a paragraph
SIZE_CHARS = 4  # lines of fewer characters are not measured for a size change
_ENDS = (".", "!", "?", ":")  # a line ending so does not run on into the next


@dataclass(frozen=True)
class Paragraph:
    """Lines of a paragraph in reading order; each line's box and text; ``level``: the heading
    level it has (``ocr_headings``), 0 for body text."""

    lines: list[OcrLine]
    level: int = 0

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)


def readable(lines: list[OcrLine]) -> list[OcrLine]:
    """The lines read with text at ``MIN_SCORE`` or over."""
    return [line for line in lines if line.text and line.score >= MIN_SCORE]


def rows(lines: list[OcrLine]) -> list[OcrLine]:
    """The boxes merged into the page's lines, top to bottom: boxes that stand side by side
    on one row are one line, their texts joined by a space, left to right."""
    return [
        OcrLine(
            left=min(b.left for b in row), top=min(b.top for b in row),
            right=max(b.right for b in row), bottom=max(b.bottom for b in row),
            text=" ".join(b.text for b in row), score=min(b.score for b in row),
            boxed=sum(b.right - b.left for b in row),
            stroke=sum(b.stroke * (b.right - b.left) for b in row) / max(sum(b.right - b.left for b in row), 1.0),
        )
        for row in row_groups(readable(lines))
    ]  # fmt: skip


def paragraphs(lines: list[OcrLine], fallback: Body | None = None) -> list[Paragraph]:
    """The page's lines as paragraphs in reading order: column by column (``ocr_columns``);
    ``fallback``: the document's body type, for a page too short to measure its own (a cover)."""
    regions = [rows(region) for region in reading_regions(readable(lines))]
    ordinary = _ordinary_gap(regions)
    body = body_of([line for ordered in regions for line in ordered]) or fallback
    found: list[tuple[list[OcrLine], bool]] = []  # each paragraph's lines, and whether it is a bold heading
    for ordered in regions:
        previous: OcrLine | None = None
        was_heading = False
        for line in ordered:
            gap = line.top - previous.bottom if previous is not None else 0.0
            # a bold line heads what follows unless the line above runs on into it
            heading = bold(line, body) and (previous is None or was_heading or previous.text.rstrip().endswith(_ENDS))
            if (
                previous is None
                or gap > ordinary + PARAGRAPH_GAP * line.height
                or _resized(previous, line)
                # a bold heading stands alone, but a title in larger type is one paragraph
                # however bold each of its lines reads
                or (heading != was_heading and not (larger_type(previous, body) and larger_type(line, body)))
            ):
                found.append(([], heading))
            found[-1][0].append(line)
            previous, was_heading = line, heading
    return [Paragraph(lines, heading_level(lines, body, heading)) for lines, heading in _large_heads_apart(found, body)]


def _large_heads_apart(found: list[tuple[list[OcrLine], bool]], body: Body | None) -> list[tuple[list[OcrLine], bool]]:
    """The paragraphs with their opening lines in larger type set apart from the rest: a title
    page's title stands so close above its author and date that they read as one paragraph."""
    apart: list[tuple[list[OcrLine], bool]] = []
    for lines, heading in found:
        large = 0
        while large < len(lines) and larger_type(lines[large], body):
            large += 1
        if 0 < large < len(lines) and large <= HEADING_LINES:
            apart += [(lines[:large], heading), (lines[large:], False)]
        else:
            apart.append((lines, heading))
    return apart


def _ordinary_gap(regions: list[list[OcrLine]]) -> float:
    """The gap between consecutive lines of a paragraph: the lower quartile of the page's gaps
    (most are within paragraphs, and the rest are wider), at most ``ORDINARY_GAP`` of the
    median line's height (on a page of one-line paragraphs every gap is a paragraph's)."""
    from statistics import median

    gaps = sorted(below.top - above.bottom for ordered in regions for above, below in pairwise(ordered))
    if not gaps:
        return 0.0
    return min(gaps[len(gaps) // 4], ORDINARY_GAP * median(line.height for ordered in regions for line in ordered))


def _resized(above: OcrLine, below: OcrLine) -> bool:
    """Whether the type changes size from ``above`` to ``below``: its characters wider or
    narrower by over ``SIZE_STEP``, and the line taller or shorter with them (a box's height
    alone is a poor measure: a line without descenders is shorter). Lines of under
    ``SIZE_CHARS`` characters are too short to measure."""
    if min(len(above.text), len(below.text)) < SIZE_CHARS:
        return False
    wide = below.pitch / above.pitch
    return not 1 / SIZE_STEP <= wide <= SIZE_STEP and (wide > 1) == (below.height > above.height)


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
        if paragraph.level:  # a heading reads as one line; its lines keep their boxes
            text = " ".join(line.text for line in paragraph.lines)
            item = document.add_heading(text=text, level=paragraph.level, prov=provs[0])
        else:
            item = document.add_text(label=DocItemLabel.TEXT, text=paragraph.text, prov=provs[0])
        item.prov.extend(provs[1:])
