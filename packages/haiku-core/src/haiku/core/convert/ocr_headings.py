"""Headings on a scanned page, told by their type (docs/ingester.md, "Scanned pages (OCR)").

A scan has no text layer to say which lines are headings; a reader tells them by
their type, and so does this:

- **larger type**: a paragraph of at most ``HEADING_LINES`` short lines whose
  characters are ``SIZE_STEP`` times as wide as the page's body text and whose
  boxes are ``HEIGHT_STEP`` times as tall is a heading at level 1 (a page's title, a chapter's
  name); the first one of the first pages titles a scan (``titles``);
- **bold type**: a short line whose strokes are ``BOLD_STEP`` times as thick as
  the body's, below a line that ends a sentence (a line of capitals inside a
  paragraph measures thick too), is a heading at level 2 ("Recording a
  Sequence" above its text), and it stands as a paragraph of its own.

The body is what most characters on the page are set in: the medians of the
lines' measures, each line counted by its characters. A stroke's thickness is
the mean length of the runs of dark pixels across a line's box, dark being
darker than midway between the box's light and dark ends, so a grey scan and
a black-on-white one measure alike. A page of fewer than ``MIN_BODY_CHARS``
characters has no body to compare with, and no headings.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from haiku.core.convert.ocr_lines import OcrLine

SIZE_STEP = 1.3  # type this many times the body's in width is a heading's, ...
HEIGHT_STEP = 1.2  # ... with boxes this much taller (a box's margins shrink the ratio of large type's)
BOLD_STEP = 1.35  # strokes this many times as thick as the body's are bold
HEADING_LINES = 3  # a heading of larger type runs to at most this many lines
HEADING_WORDS = 12  # and each line to at most this many words
BOLD_WORDS = 8  # a bold line of at most this many words is a heading
MIN_BODY_CHARS = 200  # a page of fewer characters has no body type to measure headings by


@dataclass(frozen=True)
class Body:
    """The type most of a page's characters are set in."""

    pitch: float
    height: float
    stroke: float


def with_strokes(lines: list[OcrLine], image: Any) -> list[OcrLine]:
    """The lines with the thickness of their strokes measured on ``image`` (PIL, the page as the
    lines were read on it)."""
    import numpy as np

    gray = np.asarray(image.convert("L"))
    measured = []
    for line in lines:
        crop = gray[int(line.top) : int(line.bottom) + 1, int(line.left) : int(line.right) + 1]
        if crop.size == 0:
            measured.append(line)
            continue
        low, high = np.percentile(crop, (2, 98))
        dark = crop < (low + high) / 2
        runs = int((np.diff(dark.astype(np.int8), axis=1) == 1).sum() + dark[:, 0].sum())
        measured.append(replace(line, stroke=float(dark.sum()) / runs if runs else 0.0))
    return measured


def body_of(lines: list[OcrLine]) -> Body | None:
    """The page's body type, or None on a page of too few characters to tell."""
    counted = [(len(line.text), line) for line in lines if line.text.strip()]
    if sum(n for n, _ in counted) < MIN_BODY_CHARS:
        return None
    return Body(
        pitch=_weighted_median([(line.pitch, n) for n, line in counted]),
        height=_weighted_median([(line.height, n) for n, line in counted]),
        stroke=_weighted_median([(line.stroke, n) for n, line in counted]),
    )


def bold(line: OcrLine, body: Body | None) -> bool:
    """Whether ``line`` is a short line in bold type: a heading of its own."""
    return (
        body is not None
        and body.stroke > 0
        and line.stroke >= BOLD_STEP * body.stroke
        and 0 < len(line.text.split()) <= BOLD_WORDS
        and _reads_as_heading(line.text)
    )


def heading_level(lines: list[OcrLine], body: Body | None, bold_heading: bool) -> int:
    """1 for a paragraph in larger type, 2 for a bold line that heads what follows it
    (``bold_heading``: the line above it ends a sentence), 0 for body text."""
    if body is None or not lines:
        return 0
    large = all(larger_type(line, body) for line in lines)
    short = len(lines) <= HEADING_LINES and all(len(line.text.split()) <= HEADING_WORDS for line in lines)
    if large and short and _reads_as_heading(lines[-1].text):
        return 1  # larger type, bold or not
    return 2 if len(lines) == 1 and bold_heading else 0


def larger_type(line: OcrLine, body: Body | None) -> bool:
    """Whether ``line`` is set in type larger than the body's, a heading's."""
    return body is not None and line.pitch >= SIZE_STEP * body.pitch and line.height >= HEIGHT_STEP * body.height


def _reads_as_heading(text: str) -> bool:
    """Words that can head a section: letters in them, not a clause ending in a comma, nor code
    (a prompt's input, an assignment or comparison: typewriter type reads wide and thick)."""
    text = text.strip()
    if text.startswith(_PROMPTS) or any(op in text for op in _CODE_OPERATORS):
        return False
    return sum(c.isalpha() for c in text) >= 2 and not text.endswith((",", ";"))


_PROMPTS = ("> ", "R> ", "$ ", ">>> ", "% ")
_CODE_OPERATORS = ("<-", "==", "!=", "<=", ">=", "='", '="')


def _weighted_median(values: list[tuple[float, int]]) -> float:
    ordered = sorted(values)
    half, seen = sum(n for _, n in ordered) / 2, 0
    for value, n in ordered:
        seen += n
        if seen >= half:
            return value
    return ordered[-1][0]
