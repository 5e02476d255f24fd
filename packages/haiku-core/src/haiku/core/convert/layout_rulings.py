"""Tables drawn with ruling lines, read from a PDF page's vector paths (docs/ingester.md, "PDF layout").

The layout model does not see every table: a small ruled grid set beside a
figure may come back as part of the figure, or not at all, and its reading of a
ruled table's cells is a guess where the rules are not. A grid of ruling lines
is a table by its drawing: horizontal and vertical rules that cross one
another. Many manuals rule only under each row and between the columns, with no
frame at the sides (DocBook's tables), so the grid's sides are where its rules
end: the horizontal rules' ends are its left and right, the vertical rules'
ends its top and bottom. Its cells are the rectangles between the rules, their
text what the page prints inside each one (the text layer read within the
cell, not its lines, which often run across cells); a cell whose right-hand
rule is missing spans the next column. A table ruled only around its header
and its body (LaTeX's \\hline under the header) has its body's rows parted
between its lines of text, where two columns or more hold a line on each.

Not a table: a frame around a paragraph or a listing (one cell); a rule that
runs along less than half the grid is a box's side or a connector in a
drawing, no edge of a row or a column; and a grid that reads like no table
(``layout_tables.reads_as_table``: text in fewer than two rows and two columns,
mostly empty places, or rules running through its printed words, as a chart's
gridlines do over its labels).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from haiku.core.convert.layout_lines import Line
from haiku.core.convert.layout_tables import ROW_OVERLAP, reads_as_table

RULE_THICKNESS = 3.0  # points: a path no thicker than this, one way, is a rule
MIN_RULE_LENGTH = 6.0  # points: shorter thin paths are ticks, underlines of a letter, bullets
TOUCH = 2.0  # points: how far a rule may stop short of the rule it meets
CUT_REACH = 1.0  # points each side of an inner rule where a letter means the rule runs through a word
EDGE_SPAN = 0.5  # the share of the grid's width (height) that a row's (column's) edge rules run along
EDGE_BAND = 0.1  # the share of the page at its top and bottom where a running header's rule stands
MAX_BAND = 0.5  # the tallest share of the page two rules of one width bound a table in
MIN_EDGES = 3  # of each direction, the grid's sides included: two rows and two columns
_RECTANGLE_SEGMENTS = (4, 5, 6)  # a rectangle path: move, three or four lines, maybe a close


@dataclass(frozen=True)
class Rule:
    """A ruling line in PDF points from the page's top-left corner: at ``at`` across, from
    ``start`` to ``end`` along (x for a horizontal rule, y for a vertical one)."""

    horizontal: bool
    at: float
    start: float
    end: float

    def meets(self, other: Rule) -> bool:
        if self.horizontal == other.horizontal:
            return False
        return (
            self.start - TOUCH <= other.at <= self.end + TOUCH and other.start - TOUCH <= self.at <= other.end + TOUCH
        )

    def covers(self, position: float) -> bool:
        return self.start - TOUCH <= position <= self.end + TOUCH


@dataclass(frozen=True)
class RuledTable:
    box: tuple[float, float, float, float]  # left, top, right, bottom
    data: Any  # docling TableData


def ruled_tables(page: Any, lines: Sequence[Line] = (), rules: list[Rule] | None = None) -> list[RuledTable]:
    """The ruled tables of a pypdfium2 page, top to bottom; ``lines``: the page's text lines,
    which part the rows of a table ruled only around its header and its body; ``rules``: the
    page's rules (``page_rules``), when they are read already."""
    height = page.get_height()
    rules = page_rules(page, height) if rules is None else rules
    if len(rules) < MIN_EDGES:
        return []
    text = page.get_textpage()
    try:
        found = [table for grid in _grids(_joined(rules)) if (table := _table(grid, text, height, lines)) is not None]
    finally:
        text.close()
    return sorted(found, key=lambda t: t.box[1])


def rule_bands(rules: list[Rule], height: float) -> list[tuple[float, float, float, float]]:
    """Boxes (left, top, right, bottom) between three horizontal rules of one width or more that
    no vertical rule meets: a table set the way papers set them (booktabs: a rule above, one
    under the header, one at the foot), whose columns only its text's gaps show; two such rules
    alone frame a note or a listing. Rules in the page's top
    and bottom bands (a running header's or footer's) and bands taller than ``MAX_BAND`` of the
    page (two rules far apart that merely share a width) bound none."""
    joined = _joined(rules)
    verticals = [r for r in joined if not r.horizontal]
    lone = [
        r for r in joined
        if r.horizontal and not any(r.meets(v) for v in verticals)
        and EDGE_BAND * height < r.at < (1 - EDGE_BAND) * height
    ]
    bands = []
    for rule in sorted(lone, key=lambda r: r.at):
        same = [r for r in lone if r.at > rule.at and abs(r.start - rule.start) <= 2 * TOUCH and abs(r.end - rule.end) <= 2 * TOUCH]
        below = [r for r in same if r.at - rule.at <= MAX_BAND * height]
        if len(below) >= 2 and not any(b[0] <= rule.start + 2 * TOUCH and b[1] <= rule.at <= b[3] for b in bands):
            bands.append((rule.start, rule.at, rule.end, max(r.at for r in below)))
    return bands


def page_rules(page: Any, height: float) -> list[Rule]:
    """The page's ruling lines: thin paths, and the four sides of rectangle paths."""
    import pypdfium2.raw as raw

    rules: list[Rule] = []
    for path in page.get_objects(filter=[raw.FPDF_PAGEOBJ_PATH], max_depth=1):
        left, bottom, right, top = path.get_bounds()
        top, bottom = height - top, height - bottom
        width, tall = right - left, bottom - top
        if tall <= RULE_THICKNESS and width >= MIN_RULE_LENGTH:
            rules.append(Rule(True, (top + bottom) / 2, left, right))
        elif width <= RULE_THICKNESS and tall >= MIN_RULE_LENGTH:
            rules.append(Rule(False, (left + right) / 2, top, bottom))
        elif width >= MIN_RULE_LENGTH and tall >= MIN_RULE_LENGTH and _is_rectangle(path, raw):
            rules += [
                Rule(True, top, left, right), Rule(True, bottom, left, right),
                Rule(False, left, top, bottom), Rule(False, right, top, bottom),
            ]
    return rules


def _is_rectangle(path: Any, raw: Any) -> bool:
    count = raw.FPDFPath_CountSegments(path.raw)
    if count not in _RECTANGLE_SEGMENTS:
        return False
    kinds = [raw.FPDFPathSegment_GetType(raw.FPDFPath_GetPathSegment(path.raw, i)) for i in range(count)]
    return kinds[0] == raw.FPDF_SEGMENT_MOVETO and all(k == raw.FPDF_SEGMENT_LINETO for k in kinds[1:4])


def _joined(rules: list[Rule]) -> list[Rule]:
    """The rules with the pieces of one line joined: a table's column rule is drawn a row at a
    time, and the rows between which no rule runs would otherwise part its grid."""
    joined: list[Rule] = []
    for rule in sorted(rules, key=lambda r: (r.horizontal, round(r.at), r.start)):
        last = joined[-1] if joined else None
        if last and last.horizontal == rule.horizontal and abs(last.at - rule.at) <= 0.5 and rule.start <= last.end + TOUCH:
            joined[-1] = Rule(rule.horizontal, last.at, last.start, max(last.end, rule.end))
        else:
            joined.append(rule)
    return joined


def _grids(rules: list[Rule]) -> list[list[Rule]]:
    """The rules grouped by crossing: each group a set of rules connected through their crossings."""
    groups: list[list[Rule]] = []
    unseen = list(rules)
    while unseen:
        group = [unseen.pop()]
        grew = True
        while grew:
            grew = False
            for rule in list(unseen):
                if any(rule.meets(member) for member in group):
                    group.append(rule)
                    unseen.remove(rule)
                    grew = True
        groups.append(group)
    return groups


def _edges(positions: list[float]) -> list[float]:
    merged: list[float] = []
    for at in sorted(positions):
        if not merged or at - merged[-1] > TOUCH:
            merged.append(at)
    return merged


def _sides(rules: list[Rule]) -> list[float]:
    """Where the rules of one direction start and end at the farthest: the grid's sides across them."""
    return [min(r.start for r in rules), max(r.end for r in rules)]


def _spans(rule: Rule, parallel: list[Rule], start: float, end: float) -> bool:
    """The rules at ``rule``'s position run along at least ``EDGE_SPAN`` of the grid from ``start``
    to ``end``: a row's or a column's edge, not the side of a box inside a drawing, nor the
    line that joins two boxes."""
    along = sorted((r.start, r.end) for r in parallel if abs(r.at - rule.at) <= TOUCH)
    covered, reach = 0.0, start
    for low, high in along:
        low, high = max(low, reach), min(high, end)
        if high > low:
            covered += high - low
            reach = high
    return covered >= EDGE_SPAN * (end - start)


def _cut_words(text: Any, grid: list[Rule], rows: list[float], columns: list[float], height: float) -> int:
    """How many printed words the grid's inner rules run through (a letter on each side of the
    rule, right against it): a grid drawn over a figure's labels, not around its cells."""
    cuts = 0
    for rule in grid:
        edges = rows if rule.horizontal else columns
        if not edges[0] + TOUCH < rule.at < edges[-1] - TOUCH:
            continue
        across = columns if rule.horizontal else rows
        start, end = max(rule.start, across[0]), min(rule.end, across[-1])
        if end - start < 1.0:
            continue
        sides = [
            _sliver(rule.horizontal, rule.at - CUT_REACH, rule.at - 0.2, start, end, height),
            _sliver(rule.horizontal, rule.at + 0.2, rule.at + CUT_REACH, start, end, height),
        ]
        cuts += min(len(text.get_text_bounded(**side).split()) for side in sides)
    return cuts


def _sliver(horizontal: bool, low: float, high: float, start: float, end: float, height: float) -> dict[str, float]:
    """pdfium's bounds (from the page's bottom) of the strip from ``low`` to ``high`` across a rule
    and from ``start`` to ``end`` along it, in points from the page's top-left corner."""
    if horizontal:
        return {"left": start, "right": end, "top": height - low, "bottom": height - high}
    return {"left": low, "right": high, "top": height - start, "bottom": height - end}


def _text_rows(rows: list[float], columns: list[float], lines: Sequence[Line]) -> list[float]:
    """The row edges with a ruled row parted between its lines of text where two columns or more
    hold a line on each: a table ruled below its header and around its body only. Where rules
    part most rows (more rows of one line than rows of several), a row of several lines is a
    row whose cells wrapped, and a cell whose text wraps beside one-line cells keeps its row."""
    banded = [_bands([x for x in lines if top < x.cy < bottom and columns[0] < x.cx < columns[-1]]) for top, bottom in pairwise(rows)]
    if sum(len(b) == 1 for b in banded) > sum(len(b) > 1 for b in banded):
        return rows
    edges = [rows[0]]
    for bottom, bands in zip(rows[1:], banded, strict=True):
        held = Counter(
            c for band in bands for c in {c for x in band for c in range(len(columns) - 1) if _touches(x, columns, c)}
        )
        if len(bands) > 1 and sum(1 for n in held.values() if n > 1) >= 2:
            edges += [(max(x.bottom for x in a) + min(x.top for x in b)) / 2 for a, b in pairwise(bands)]
        edges.append(bottom)
    return edges


def _bands(lines: list[Line]) -> list[list[Line]]:
    """The lines grouped by height on the page: lines overlapping one another up and down are one band."""
    bands: list[list[Line]] = []
    for line in sorted(lines, key=lambda x: x.top):
        if bands and max(x.bottom for x in bands[-1]) - line.top > ROW_OVERLAP * line.height:
            bands[-1].append(line)
        else:
            bands.append([line])
    return bands


def _touches(line: Line, columns: list[float], c: int) -> bool:
    return min(line.right, columns[c + 1]) > max(line.left, columns[c])


def _table(grid: list[Rule], text: Any, height: float, lines: Sequence[Line] = ()) -> RuledTable | None:
    from docling_core.types.doc import BoundingBox, CoordOrigin, TableCell, TableData

    horizontals = [r for r in grid if r.horizontal]
    verticals = [r for r in grid if not r.horizontal]
    if not horizontals or not verticals:
        return None
    top, bottom = _sides(verticals)
    left, right = _sides(horizontals)
    rows = _edges([r.at for r in horizontals if _spans(r, horizontals, left, right)] + [top, bottom])
    columns = _edges([r.at for r in verticals if _spans(r, verticals, top, bottom)] + [left, right])
    if len(rows) < MIN_EDGES or len(columns) < MIN_EDGES:
        return None
    rows = _text_rows(rows, columns, lines)
    cells = []
    for r, (top, bottom) in enumerate(pairwise(rows)):
        middle = (top + bottom) / 2
        c = 0
        while c < len(columns) - 1:
            end = c + 1
            while end < len(columns) - 1 and not any(
                abs(v.at - columns[end]) <= TOUCH and v.covers(middle) for v in verticals
            ):
                end += 1
            box = BoundingBox(l=columns[c], t=top, r=columns[end], b=bottom, coord_origin=CoordOrigin.TOPLEFT)
            inner = box.to_bottom_left_origin(page_height=height)
            printed = text.get_text_bounded(left=inner.l + 0.5, bottom=inner.b + 0.5, right=inner.r - 0.5, top=inner.t - 0.5)
            cells.append(
                TableCell(
                    text=" ".join(printed.split()), bbox=inner,
                    start_row_offset_idx=r, end_row_offset_idx=r + 1,
                    start_col_offset_idx=c, end_col_offset_idx=end,
                    column_header=r == 0,
                )
            )
            c = end
    if not reads_as_table(cells, len(rows) - 1, len(columns) - 1, _cut_words(text, grid, rows, columns, height)):
        return None
    data = TableData(num_rows=len(rows) - 1, num_cols=len(columns) - 1, table_cells=cells)
    return RuledTable((columns[0], rows[0], columns[-1], rows[-1]), data)
