"""A scanned page read the right way up (docs/ingester.md, "Scanned pages (OCR)").

A page may be scanned sideways or upside down. The direction classifier the
wheel ships tells only 0° from 180°, line by line, so the page is read as it
comes first and, only when that read is poor (``reads_well``), read again
turned a quarter, half and three quarters; the read that scores best
(``score``: characters read, weighted by the recogniser's confidence) is
kept. An upright page costs nothing more. When most boxes of the first read
are taller than wide, the text runs up or down the page and the quarter turns
are tried first, the one the direction classifier picks (asked of a few lines
turned a quarter) before the other. The lines are put in reading order on the turned page, then
their boxes are turned back onto the page as it is stored (``turned_back``),
so ``visualize`` draws them on the page image.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from haiku.core.convert.ocr_text import OcrLine, readable

WELL_READ_CHARS = 20  # a read of at least this many characters ...
WELL_READ_CONFIDENCE = 0.85  # ... at this mean confidence (by character) is taken as upright


def score(lines: list[OcrLine]) -> float:
    """Characters read, each weighted by the confidence of its line."""
    return sum(len(line.text) * line.score for line in readable(lines))


def reads_well(lines: list[OcrLine]) -> bool:
    chars = sum(len(line.text) for line in readable(lines))
    return chars >= WELL_READ_CHARS and score(lines) >= WELL_READ_CONFIDENCE * chars


def turned(image: Any, turn: int) -> Any:
    """``image`` (PIL) turned ``turn`` degrees counter-clockwise (90, 180 or 270)."""
    from PIL import Image

    method = {90: Image.Transpose.ROTATE_90, 180: Image.Transpose.ROTATE_180, 270: Image.Transpose.ROTATE_270}
    return image.transpose(method[turn])


def turned_back(line: OcrLine, turn: int, width: float, height: float) -> OcrLine:
    """``line``, read on the page turned ``turn`` degrees counter-clockwise, on the page as it is
    (``width`` × ``height`` pixels)."""
    corners = [(line.left, line.top), (line.right, line.bottom)]
    if turn == 0:
        return line
    if turn == 90:  # the turned page's (x, y) is the page's (width - y, x)
        points = [(width - y, x) for x, y in corners]
    elif turn == 270:  # the page's (y, height - x)
        points = [(y, height - x) for x, y in corners]
    else:  # 180: the page's (width - x, height - y)
        points = [(width - x, height - y) for x, y in corners]
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return OcrLine(min(xs), min(ys), max(xs), max(ys), line.text, line.score)


def upright_read(
    image: Any, read: Callable[[Any], list[OcrLine]], quarter: Callable[[Any, list[OcrLine]], int]
) -> tuple[int, list[OcrLine]]:
    """The turn (degrees counter-clockwise) that reads ``image`` (PIL) best and its lines,
    boxed on the image turned so; ``read``: one OCR read of an image; ``quarter``: which
    quarter turn (90 or 270) sets upright a page of the lines given, which run up or down it."""
    lines = read(image)
    if reads_well(lines):
        return 0, lines
    best_turn, best = 0, lines
    tall = [line for line in lines if line.bottom - line.top > line.right - line.left]
    turns = [180, 90, 270]
    if lines and 2 * len(tall) > len(lines):  # the text runs up or down the page
        first = quarter(image, tall)
        turns = [first, 360 - first, 180]
    for turn in turns:
        read_so = read(turned(image, turn))
        if score(read_so) > score(best):
            best_turn, best = turn, read_so
        if reads_well(read_so):
            break
    return best_turn, best
