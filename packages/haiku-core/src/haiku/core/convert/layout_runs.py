"""A PDF line split into the runs its characters stand in (docs/ingester.md, "PDF layout").

The native pipeline's lines join what stands on one baseline, so a table's
row can come as one line across its columns ("nDCG@10 Recall@100 nDCG@10").
Inside a table region (the layout model's, or between a table's rules) each
line is split where two of its characters stand further apart than
``RUN_GAP`` of the line's height: wider than a space between two words, as
narrow as the gaps tight tables leave between columns. The runs keep the
line's own spelling of its words. Code set in a monospaced font spaces its words
a whole character apart, as wide as a tight column gap: there two characters
stand in one run while they stand at most ``MONO_PITCHES`` character pitches
apart (one space between them), however wide that is.
"""

from __future__ import annotations

import ctypes
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, replace
from itertools import pairwise
from statistics import median
from typing import Any

from haiku.core.convert.layout_fonts import monospaced
from haiku.core.convert.layout_lines import Line

RUN_GAP = 0.5  # line heights between two characters that stand in two runs
MONO_PITCHES = 2.5  # monospaced characters' pitches from one's left to the next's within a run


@dataclass(frozen=True)
class _Char:
    text: str
    left: float
    right: float
    cy: float  # from the page's top
    spaced: bool  # the text layer puts a space before it
    mono: bool = False  # set in a monospaced font


def line_runs(page: Any, lines: list[Line], height: float) -> dict[Line, list[Line]]:
    """Each of ``lines`` (of the pypdfium2 ``page``) that its characters split into runs, and its
    runs left to right; a line that stands as one run is left out."""
    if not lines:
        return {}
    chars = sorted(_chars(page, height), key=lambda c: c.cy)
    ys = [c.cy for c in chars]
    split = {}
    for line in lines:
        pad = 0.2 * line.height
        inside = sorted(
            (c for c in chars[bisect_left(ys, line.top - pad) : bisect_right(ys, line.bottom + pad)]
             if line.left - pad <= (c.left + c.right) / 2 <= line.right + pad),
            key=lambda c: c.left,
        )
        runs = _runs(line, inside)
        if len(runs) > 1:
            split[line] = runs
    return split


def _runs(line: Line, chars: list[_Char]) -> list[Line]:
    groups: list[list[_Char]] = []
    pitch = _mono_pitch(chars, line.height)
    for char in chars:
        last = groups[-1][-1] if groups else None
        if last is not None and (
            char.left - last.right < RUN_GAP * line.height
            or (pitch and char.mono and last.mono and char.left - last.left <= MONO_PITCHES * pitch)
        ):
            groups[-1].append(char)
        else:
            groups.append([char])
    if len(groups) < 2:
        return [line]
    texts = _cut(line.text, [len(group) for group in groups]) or [_text(group) for group in groups]
    return [
        replace(line, text=text, left=group[0].left, right=max(c.right for c in group))
        for group, text in zip(groups, texts, strict=True)
    ]


def _mono_pitch(chars: list[_Char], height: float) -> float:
    """The pitch of the line's monospaced characters (left to left of two set side by side, no
    space between them); 0 when it has fewer than three such pairs."""
    steps = [
        b.left - a.left
        for a, b in pairwise(chars)
        if a.mono and b.mono and not b.spaced and 0 < b.left - a.left < height
    ]
    return median(steps) if len(steps) >= 3 else 0.0


def _cut(text: str, counts: list[int]) -> list[str] | None:
    """The line's own text cut into pieces of ``counts`` characters each, spaces aside (the
    line's text spells its words as the text layer's extraction did); None when the counts do
    not add up to the line's characters (a ligature read as one character in one, two in the other)."""
    if sum(counts) != sum(1 for ch in text if not ch.isspace()):
        return None
    pieces, start = [], 0
    for count in counts:
        end, seen = start, 0
        while seen < count:
            seen += not text[end].isspace()
            end += 1
        pieces.append(text[start:end].strip())
        start = end
    return pieces


def _text(chars: list[_Char]) -> str:
    return chars[0].text + "".join((" " if c.spaced else "") + c.text for c in chars[1:])


def _chars(page: Any, height: float) -> list[_Char]:
    import pypdfium2.raw as pdfium

    textpage = page.get_textpage()
    try:
        raw = textpage.raw
        left, right, bottom, top = (ctypes.c_double() for _ in range(4))
        name = ctypes.create_string_buffer(128)
        flags = ctypes.c_int()
        chars = []
        spaced = False
        for index in range(pdfium.FPDFText_CountChars(raw)):
            code = pdfium.FPDFText_GetUnicode(raw, index)
            if code <= 32 or not pdfium.FPDFText_GetCharBox(raw, index, left, right, bottom, top):
                spaced = True
                continue
            text = chr(code) if code < 0x110000 else "?"
            pdfium.FPDFText_GetFontInfo(raw, index, name, len(name), ctypes.byref(flags))
            mono = monospaced(name.value.decode("latin-1"), flags.value)
            chars.append(_Char(text, left.value, right.value, height - (bottom.value + top.value) / 2, spaced, mono))
            spaced = False
        return chars
    finally:
        textpage.close()
