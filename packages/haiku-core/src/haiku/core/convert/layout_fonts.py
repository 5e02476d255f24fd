"""The fonts of a PDF page's lines, read from its text layer (docs/ingester.md, "PDF layout").

A line's box is a poor measure of its type size (and the font's size alone
misses how the page scales it): "other distribution?" and
"Linux distributions? Why" are one heading at 14.3 points, yet their boxes are
10.9 and 14.1 points tall, and a superscript raises a body line's box. Here each
line gets the size most of its characters are set in, whether they are bold,
and whether the line ends or opens with a footnote marker (digits or a dagger
set smaller than the line), from pdfium's characters inside the line's box.

A font's weight as pdfium reports it is a guess for many embedded Type 1 fonts
(LaTeX's Latin Modern regular reads 744, its bold 620), so a font whose name
says its style ("LMRoman10-Regular", "Times-Bold", "NimbusRomNo9L-Medi") is
taken at its word, and the weight decides only for names that say nothing.
"""

from __future__ import annotations

import ctypes
import math
import re
from bisect import bisect_left, bisect_right
from collections import Counter
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from haiku.core.convert.layout_lines import Line

BOLD_WEIGHT = 600  # the font weight from which a character is bold (400 regular, 700 bold)
BOLD_SHARE = 0.8  # a line is bold when this share of its characters is
MARKER_SIZE = 0.8  # a footnote marker is set at most this share of its line's size
MONO_SHARE = 0.8  # a line is set in a monospaced (code) font when this share of its characters is
# Style words of font names, after any subset prefix ("ABCDEF+"): TeX's cmbx/sfbx are its bold,
# URW's "-Medi" is Times' bold; cmr, cmti, sfrm, ... and "-Regu" its regular faces.
_BOLD_NAME = re.compile(r"bold|black|heavy|demi|cmbx|sfbx|cmb\d|-medi(?:ital)?$", re.IGNORECASE)
_REGULAR_NAME = re.compile(
    r"regular|-regu|roman|italic|ital$|oblique|book|light|thin|normal"
    r"|^(?:cm|sf)(?:r|rm|ti|it|sl|tt|mi|sy|ex|ss|csc|sc|u)\d",
    re.IGNORECASE,
)
MATH_SHARE = 0.3  # a line is a formula's when this share of its characters is set in math fonts
_ITALIC_NAME = re.compile(r"italic|oblique|-ital|ital$|cmti|sfti", re.IGNORECASE)
_ITALIC = 1 << 6  # the font descriptor's Italic flag
# TeX's math fonts (Computer and Latin Modern, AMS, STIX, Cambria), and the Symbol font
_MATH_NAME = re.compile(r"math|cmmi|cmsy|cmex|msbm|msam|eufm|rsfs|lmmi|lmsy|lmex|stix|symbol", re.IGNORECASE)
_MONO_NAME = re.compile(r"mono|courier|cmtt|sftt|typewriter|consol|menlo|inconsolata|code", re.IGNORECASE)
_FIXED_PITCH = 1  # the font descriptor's FixedPitch flag
_FORCE_BOLD = 1 << 18  # the font descriptor's ForceBold flag
# "∗" (U+2217) is the asterisk TeX sets from its math fonts to mark an author's footnote
_MARKERS = frozenset("0123456789*∗†‡§¶")
_SUPERSCRIPTS = frozenset("¹²³⁰⁴⁵⁶⁷⁸⁹*∗†‡")


@dataclass(frozen=True)
class _Char:
    text: str
    cx: float
    cy: float  # from the page's top
    size: float
    bold: bool
    mono: bool = False
    italic: bool = False
    math: bool = False


def with_fonts(page: Any, lines: list[Line], height: float) -> list[Line]:
    """``lines`` of the pypdfium2 ``page`` with their ``size``, ``bold`` and ``marker`` read
    from its characters; a line over no character keeps its box's height as its size."""
    chars = _chars(page, height)
    if not chars:
        return lines
    chars.sort(key=lambda c: c.cy)
    ys = [c.cy for c in chars]
    fitted = []
    for line in lines:
        pad = 0.2 * line.height
        inside = [
            c
            for c in chars[bisect_left(ys, line.top - pad) : bisect_right(ys, line.bottom + pad)]
            if line.left - pad <= c.cx <= line.right + pad
        ]
        fitted.append(_fitted(line, sorted(inside, key=lambda c: c.cx)))
    return fitted


def _fitted(line: Line, chars: list[_Char]) -> Line:
    visible = [c for c in chars if not c.text.isspace()]
    if not visible:
        return line
    sizes = Counter(round(c.size * 2) / 2 for c in visible)
    size = sizes.most_common(1)[0][0]
    bold = sum(c.bold for c in visible) >= BOLD_SHARE * len(visible)
    mono = sum(c.mono for c in visible) >= MONO_SHARE * len(visible)
    italic = sum(c.italic for c in visible) >= BOLD_SHARE * len(visible)
    math = sum(c.math for c in visible) >= MATH_SHARE * len(visible)
    marker = _has_marker(line.text, visible, size)
    return replace(line, size=size, bold=bold, mono=mono, italic=italic, math=math, marker=marker)


def _has_marker(text: str, visible: list[_Char], size: float) -> bool:
    """The line ends in a footnote marker ("Resource Center¹") or opens with one ("¹Google Inc."):
    a superscript character, or digits or a dagger set smaller than the line, next to a word."""
    text = text.strip()
    if len(text.split()) > 1 and (text[-1] in _SUPERSCRIPTS or text[0] in _SUPERSCRIPTS):
        return True
    middle = sorted(c.cy for c in visible)[len(visible) // 2]
    return _small_marker(visible, size, middle) or _small_marker(visible[::-1], size, middle)


def _small_marker(visible: list[_Char], size: float, middle: float) -> bool:
    """``visible``, read from its end, ends in marker characters set small and raised (not a
    subscript: "CO2") after a letter."""
    count = 0
    for char in reversed(visible):
        if char.text not in _MARKERS or char.size > MARKER_SIZE * size or char.cy > middle - 0.1 * size:
            break
        count += 1
    return 0 < count < len(visible) and visible[-count - 1].text.isalpha()


def _chars(page: Any, height: float) -> list[_Char]:
    import pypdfium2.raw as pdfium

    textpage = page.get_textpage()
    try:
        raw = textpage.raw
        left, right, bottom, top = (ctypes.c_double() for _ in range(4))
        name = ctypes.create_string_buffer(128)
        flags = ctypes.c_int()
        matrix = pdfium.FS_MATRIX()
        chars = []
        for index in range(pdfium.FPDFText_CountChars(raw)):
            code = pdfium.FPDFText_GetUnicode(raw, index)
            if code <= 32 or not pdfium.FPDFText_GetCharBox(raw, index, left, right, bottom, top):
                continue
            pdfium.FPDFText_GetFontInfo(raw, index, name, len(name), ctypes.byref(flags))
            style = font_style(name.value.decode("latin-1"), pdfium.FPDFText_GetFontWeight(raw, index), flags.value)
            # the size the reader sees: the font's size scaled as the text and the page draw it
            # (text set at 1 point and scaled 12 times, a figure drawn at half its size)
            scale = math.hypot(matrix.c, matrix.d) if pdfium.FPDFText_GetMatrix(raw, index, ctypes.byref(matrix)) else 1.0
            size = pdfium.FPDFText_GetFontSize(raw, index) * scale
            center = ((left.value + right.value) / 2, height - (bottom.value + top.value) / 2)
            text = chr(code) if code < 0x110000 else "?"
            chars.append(_Char(text, *center, size, style.bold, style.mono, style.italic, style.math))
        return chars
    finally:
        textpage.close()


@dataclass(frozen=True)
class FontStyle:
    bold: bool
    mono: bool
    italic: bool
    math: bool  # one of TeX's math fonts or the Symbol font


@lru_cache(maxsize=1024)
def font_style(name: str, weight: int, flags: int) -> FontStyle:
    """The style of the font named ``name`` (pdfium's weight and the descriptor's ``flags``):
    read once per font, not per character, since a page has a few fonts and thousands of
    characters."""
    font = name.rpartition("+")[2]  # without its subset prefix ("ABCDEF+")
    italic = bool(flags & _ITALIC) or bool(_ITALIC_NAME.search(font))
    return FontStyle(font_is_bold(font, weight, flags), monospaced(font, flags), italic, bool(_MATH_NAME.search(font)))


@lru_cache(maxsize=1024)
def monospaced(font: str, flags: int) -> bool:
    """Whether the font named ``font`` (with the descriptor's ``flags``) is monospaced."""
    return bool(flags & _FIXED_PITCH) or bool(_MONO_NAME.search(font.rpartition("+")[2]))


def font_is_bold(font: str, weight: int, flags: int) -> bool:
    """Whether a character of the font named ``font`` is bold: its name's style word, else its
    weight (-1: none known), else the descriptor's ForceBold flag."""
    if _BOLD_NAME.search(font):
        return True
    if _REGULAR_NAME.search(font):
        return False
    if weight > 0:
        return weight >= BOLD_WEIGHT
    return bool(flags & _FORCE_BOLD)
