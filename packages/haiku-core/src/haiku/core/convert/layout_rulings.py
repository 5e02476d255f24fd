"""Tables drawn with ruling lines, read from a PDF page's vector paths (docs/ingester.md, "PDF layout").

The layout model does not see every table: a small ruled grid set beside a
figure may come back as part of the figure, or not at all. A grid of ruling
lines is a table by its drawing: horizontal and vertical rules that cross one
another, at least three of each (two rows, two columns). Its cells are the
rectangles between the rules, their text what the page prints inside each one
(the text layer read within the cell, not its lines, which often run across
cells); a cell whose right-hand rule is missing spans the next column. A frame
around a paragraph or a listing is one cell, not a table; a grid with text in
fewer than two rows and two columns is a drawing, not a table.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import Any

RULE_THICKNESS = 3.0  # points: a path no thicker than this, one way, is a rule
MIN_RULE_LENGTH = 6.0  # points: shorter thin paths are ticks, underlines of a letter, bullets
TOUCH = 2.0  # points: how far a rule may stop short of the rule it meets
MIN_RULES = 3  # of each direction: two rows and two columns
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


def ruled_tables(page: Any) -> list[RuledTable]:
    """The ruled tables of a pypdfium2 page, top to bottom."""
    height = page.get_height()
    rules = page_rules(page, height)
    if len(rules) < 2 * MIN_RULES:
        return []
    text = page.get_textpage()
    try:
        found = [table for grid in _grids(rules) if (table := _table(grid, text, height)) is not None]
    finally:
        text.close()
    return sorted(found, key=lambda t: t.box[1])


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


def _table(grid: list[Rule], text: Any, height: float) -> RuledTable | None:
    from docling_core.types.doc import BoundingBox, CoordOrigin, TableCell, TableData

    rows = _edges([r.at for r in grid if r.horizontal])
    columns = _edges([r.at for r in grid if not r.horizontal])
    if len(rows) < MIN_RULES or len(columns) < MIN_RULES:
        return None
    verticals = [r for r in grid if not r.horizontal]
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
    filled = [cell for cell in cells if cell.text]
    if len({c.start_row_offset_idx for c in filled}) < 2 or len({c.start_col_offset_idx for c in filled}) < 2:
        return None
    data = TableData(num_rows=len(rows) - 1, num_cols=len(columns) - 1, table_cells=cells)
    return RuledTable((columns[0], rows[0], columns[-1], rows[-1]), data)
