"""The columns of a scanned page, so that OCR's lines are read column by column
(docs/ingester.md, "Scanned pages (OCR)").

OCR boxes a page's text line by line; on a page set in two columns a left
column's line and the right column's line beside it share a row, and read row
by row they would run together ("Recording a Sequence simply use LOCATE…").
A column block is a run of rows that all leave one gutter free: an upright
strip of the page at least ``GUTTER`` of a line's height wide that no box
crosses (boxes are taller than the type:
a gutter of half a line of type is ``GUTTER`` of a box), with text on both sides of it in at least ``MIN_SPLIT_ROWS`` rows,
and lines of text (not a table's cells) on each side: boxes of a median width
of ``MIN_COLUMN_WIDTH`` line heights or more. A block is read left column
first, then right; each column is looked at again for columns of its own.
Rows that cross the gutter (a heading or a paragraph across the page) end the
block and are read where they stand, and so does a wider gap below the last
row with text on both sides (a short heading across the page leaves the
gutter free).
"""

from __future__ import annotations

import itertools
from statistics import median
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from haiku.core.convert.ocr_lines import OcrLine

GUTTER = 0.4  # the narrowest gutter between columns, in line heights (boxes are taller than the type)
MIN_SPLIT_ROWS = 3  # rows with text on both sides of a gutter that make a column block
MIN_COLUMN_WIDTH = 6.0  # a column's boxes are lines of text: this many line heights wide (median)
SAME_ROW = 0.5  # boxes whose vertical centres lie within this share of a line's height share a row
MAX_DEPTH = 3  # columns within columns, at most this deep
SPACING_STEP = 1.5  # a gap between rows over this many times a block's line spacing ends it


def row_groups(boxes: list[OcrLine]) -> list[list[OcrLine]]:
    """The boxes by row, top to bottom, each row left to right: boxes whose vertical centres
    lie within ``SAME_ROW`` of a line's height share a row."""
    groups: list[list[OcrLine]] = []
    for box in sorted(boxes, key=lambda line: (line.top + line.bottom) / 2):
        centre = (box.top + box.bottom) / 2
        if groups:
            last = groups[-1]
            last_centre = sum((b.top + b.bottom) / 2 for b in last) / len(last)
            if abs(centre - last_centre) <= SAME_ROW * min(box.height, last[0].height):
                last.append(box)
                continue
        groups.append([box])
    for group in groups:
        group.sort(key=lambda b: b.left)
    return groups


def reading_regions(boxes: list[OcrLine], depth: int = 0) -> list[list[OcrLine]]:
    """The boxes as regions in reading order: a column of a column block is a region, and so
    is each run of rows outside a block."""
    if not boxes:
        return []
    groups = row_groups(boxes)
    height = median(box.height for box in boxes)
    regions: list[list[OcrLine]] = []
    plain: list[OcrLine] = []
    start = 0
    while start < len(groups):
        block = _column_block(groups, start, height) if depth < MAX_DEPTH else None
        if block is None:
            plain.extend(groups[start])
            start += 1
            continue
        end, gutter = block
        if plain:
            regions.append(plain)
            plain = []
        rows = [box for group in groups[start:end] for box in group]
        for side in ([b for b in rows if b.right <= gutter], [b for b in rows if b.left >= gutter]):
            regions.extend(reading_regions(side, depth + 1))
        start = end
    if plain:
        regions.append(plain)
    return regions


def _column_block(groups: list[list[OcrLine]], start: int, height: float) -> tuple[int, float] | None:
    """The end (exclusive) and gutter (an x between the columns) of the column block whose
    first row is ``groups[start]``, if that row begins one."""
    for low, high in _gaps(groups[start], height):
        end, split, last_split = start, 0, start
        while end < len(groups):
            narrowed = _narrowed(groups[end], low, high, height)
            if narrowed is None:
                break
            low, high = narrowed
            if _both_sides(groups[end], low, high):
                split, last_split = split + 1, end
            end += 1
        if split < MIN_SPLIT_ROWS:
            continue
        end = _block_end(groups, start, last_split, end)
        gutter = (low + high) / 2
        rows = [box for group in groups[start:end] for box in group]
        left = [b.right - b.left for b in rows if b.right <= gutter]
        right = [b.right - b.left for b in rows if b.left >= gutter]
        if min(median(left), median(right)) >= MIN_COLUMN_WIDTH * height:
            return end, gutter
    return None


def _block_end(groups: list[list[OcrLine]], start: int, last_split: int, end: int) -> int:
    """Where the block ends: past its last row with text on both sides, the rows of one side that
    go on at the block's line spacing (a column longer than the other), not those after a wider
    gap (a heading across the page below the block, which leaves the gutter free too)."""
    tops = [min(box.top for box in group) for group in groups[start:end]]
    spacing = median(b - a for a, b in itertools.pairwise(tops)) if len(tops) > 1 else 0.0
    stop = last_split + 1
    while stop < end and tops[stop - start] - tops[stop - start - 1] <= SPACING_STEP * spacing:
        stop += 1
    return stop


def _gaps(row: list[OcrLine], height: float) -> list[tuple[float, float]]:
    """The gaps between a row's boxes wide enough for a gutter, as (left, right) x's."""
    return [
        (a.right, b.left) for a, b in itertools.pairwise(row) if b.left - a.right >= GUTTER * height
    ]


def _narrowed(row: list[OcrLine], low: float, high: float, height: float) -> tuple[float, float] | None:
    """The gutter (low, high) as this row leaves it free, narrowed to the row's own gap where it
    has one there; None when a box of the row crosses it or leaves less than ``GUTTER``."""
    for box in row:
        if box.right <= low or box.left >= high:
            continue
        if box.left <= low < box.right < high:  # reaches into the strip from the left
            low = box.right
        elif low < box.left < high <= box.right:  # from the right
            high = box.left
        else:  # across the strip, or standing in it
            return None
    return (low, high) if high - low >= GUTTER * height else None


def _both_sides(row: list[OcrLine], low: float, high: float) -> bool:
    return any(b.right <= low for b in row) and any(b.left >= high for b in row)
