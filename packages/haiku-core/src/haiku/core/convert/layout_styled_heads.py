"""Bold and italic lines that stand alone above a paragraph: section heads set at the body's
size, which their type sets apart (docs/ingester.md, "PDF layout"); ``layout_headings`` decides
which of them head a section."""

from __future__ import annotations

from typing import NamedTuple

from haiku.core.convert.layout_headings import heading_shaped, numbered
from haiku.core.convert.layout_lines import Line

ITALIC_HEAD_SIZE = 1.05  # an italic line heads a paragraph when set at least this much larger than the body
PARAGRAPH_GAP = 0.8  # a gap between lines wider than this share of a line's height starts a paragraph
BELOW_HEIGHTS = 3.0  # a head's paragraph starts within this many line heights (a journal's small heads stand apart)
GUTTER_HEIGHTS = 1.0  # a line a line height or more to the side of another may stand in another column
GUTTER_PARAGRAPH_WIDTH = 1.5  # ... when the paragraph under the first is this many times as wide
HEAD_LINES = 3  # a head wraps onto at most this many lines
FULL_LINE = 0.8  # ... or a full line of body text: this share of its column's width or wider


class StyledHeads(NamedTuple):
    heads: set[int]  # the ids of the lines that head what follows them
    runs_on: set[int]  # ... of those whose head carries on onto the next line ("I. FIRST-LEVEL HEADING:")


def styled_heads(lines: list[Line], body_size: float, measure: float = 0.0) -> StyledHeads:
    """The bold lines, and the italic ones set larger than the body text (``body_size``, a LaTeX
    paper's subsubsections), that stand alone above a paragraph: no other line on their row (but
    in another column), the nearest line under them plain and within ``BELOW_HEIGHTS`` line
    heights, and a gap above them (they do not carry on the paragraph before). A head wrapped
    onto up to ``HEAD_LINES`` lines of its style stands alone as a whole. ``measure``: the width
    of a full line of body text (``layout_headings``)."""
    heads: set[int] = set()
    runs_on: set[int] = set()
    for line in lines:
        italic_head = line.italic and body_size > 0 and line.size >= ITALIC_HEAD_SIZE * body_size
        if not (line.bold or italic_head) or line.math:
            continue
        beside, below, above = _neighbours(line, lines)
        if above is not None and line.top - above.bottom <= PARAGRAPH_GAP * line.height and not above.text.endswith(
            (".", ":", "!", "?")
        ):
            continue  # it carries on the paragraph above
        chain = [line]
        while below is not None and len(chain) < HEAD_LINES and _wraps(chain[-1], below):
            chain.append(below)
            more, below, _ = _neighbours(below, lines)
            beside += more
        last = chain[-1]
        plain_below = below is not None and not below.bold and not (italic_head and not line.bold and below.italic)
        if not plain_below or below.top - last.bottom > BELOW_HEIGHTS * max(last.height, below.height):
            continue
        if any(not _across_gutter(line, other, below, measure) for other in beside):
            continue
        full = measure > 0 and any(x.right - x.left >= FULL_LINE * measure for x in chain)
        if full and (len(chain) > 1 or below.top - line.bottom <= PARAGRAPH_GAP * line.height):
            continue  # a full line with the next at the paragraph's leading: a bold paragraph's first
        if len(chain) > 1 and not heading_shaped(" ".join(x.text for x in chain)):
            continue  # a short bold paragraph ("Do not run this as root, it" / "will break.")
        heads.update(id(x) for x in chain)
        runs_on.update(id(x) for x in chain[:-1])
    return StyledHeads(heads, runs_on)


def _neighbours(line: Line, lines: list[Line]) -> tuple[list[Line], Line | None, Line | None]:
    """The lines on ``line``'s row, and the nearest under and above it that overlap it sideways."""
    beside: list[Line] = []
    below = above = None
    for other in lines:
        if other is line:
            continue
        if min(line.bottom, other.bottom) - max(line.top, other.top) > 0.3 * min(line.height, other.height):
            beside.append(other)
            continue
        sideways = min(line.right, other.right) > max(line.left, other.left)
        if sideways and other.top >= line.bottom - 0.3 * line.height and (below is None or other.top < below.top):
            below = other
        if sideways and other.bottom <= line.top + 0.3 * line.height and (above is None or other.bottom > above.bottom):
            above = other
    return beside, below, above


def _wraps(line: Line, below: Line) -> bool:
    """``below`` carries ``line``'s head on: the same style and size, at a line's leading under
    it, from the same left edge, not opening a head of its own with a section's number."""
    same = below.bold == line.bold and below.italic == line.italic and abs(below.size - line.size) <= 0.05 * line.size
    near = 0 <= below.top - line.bottom <= PARAGRAPH_GAP * line.height
    aligned = abs(below.left - line.left) <= line.height
    return same and near and aligned and not below.math and not numbered(below.text)


def _across_gutter(line: Line, other: Line, below: Line, measure: float) -> bool:
    """``other``, on ``line``'s row, stands in another column: a gutter apart from it and clear of
    the paragraph under ``line`` (``below``), which is a full line of body text (``measure``
    wide) or much wider than ``line`` (a table's next row under a bold row label is as narrow as
    the label, and its cells stand beside it)."""
    gap = max(other.left - line.right, line.left - other.right)
    clear = other.left >= below.right or other.right <= below.left
    width = below.right - below.left
    wide = width >= GUTTER_PARAGRAPH_WIDTH * (line.right - line.left) or (measure > 0 and width >= FULL_LINE * measure)
    return gap >= GUTTER_HEIGHTS * line.height and clear and wide
