"""Bold and italic lines that stand alone above a paragraph: section heads set at the body's
size, which their type sets apart (docs/ingester.md, "PDF layout"); ``layout_headings`` decides
which of them head a section."""

from __future__ import annotations

from haiku.core.convert.layout_lines import Line

ITALIC_HEAD_SIZE = 1.05  # an italic line heads a paragraph when set at least this much larger than the body
PARAGRAPH_GAP = 0.8  # a gap between lines wider than this share of a line's height starts a paragraph
BELOW_HEIGHTS = 2.5  # a head's paragraph starts within this many of its line heights (a journal's small heads stand apart)
GUTTER_HEIGHTS = 1.0  # a line a line height or more to the side of another may stand in another column
GUTTER_PARAGRAPH_WIDTH = 1.5  # ... when the paragraph under the first is this many times as wide
FULL_LINE = 0.8  # ... or a full line of body text: this share of its column's width or wider


def styled_heads(lines: list[Line], body_size: float, measure: float = 0.0) -> set[int]:
    """The ids of the bold lines, and the italic ones set larger than the body text
    (``body_size``, a LaTeX paper's subsubsections), that stand alone above a paragraph: no
    other line on their row (but in another column), the nearest line under them plain and
    within ``BELOW_HEIGHTS`` line heights, and a gap above them (they do not carry on the paragraph before).
    ``measure``: the width of a full line of body text (``layout_headings``)."""
    heads = set()
    for line in lines:
        italic_head = line.italic and body_size > 0 and line.size >= ITALIC_HEAD_SIZE * body_size
        if not (line.bold or italic_head) or line.math:
            continue
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
        plain_below = below is not None and not below.bold and not (italic_head and not line.bold and below.italic)
        if not plain_below or below.top - line.bottom > BELOW_HEIGHTS * line.height:
            continue
        if any(not _across_gutter(line, other, below, measure) for other in beside):
            continue
        full = measure > 0 and line.right - line.left >= FULL_LINE * measure
        if full and below.top - line.bottom <= PARAGRAPH_GAP * line.height:
            continue  # a full line with the next at the paragraph's leading: a bold paragraph's first
        if above is None or line.top - above.bottom > PARAGRAPH_GAP * line.height or above.text.endswith((".", ":", "!", "?")):
            heads.add(id(line))
    return heads


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
