"""The text lines of a PDF page as the layout step sees them (docs/ingester.md, "PDF layout").

docling's native pipeline yields one text item per line of the PDF's text layer,
with its box; here each is a ``Line`` in PDF points from the page's top-left
corner, the way a reader (and the layout model) sees the page.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

OCR_PAGE_SHARE = 0.5  # a text item covering this share of its page is OCR text, not a line


@dataclass(frozen=True)
class Line:
    page_no: int
    text: str
    left: float
    top: float
    right: float
    bottom: float
    size: float = 0.0  # the type size most of its characters have (``layout_fonts``); 0: unknown
    bold: bool = False
    mono: bool = False  # set in a monospaced (code) font
    italic: bool = False
    math: bool = False  # a formula's line: much of it set in math fonts
    marker: bool = False  # ends or opens with a footnote marker

    @property
    def height(self) -> float:
        return self.bottom - self.top

    @property
    def cx(self) -> float:
        return (self.left + self.right) / 2

    @property
    def cy(self) -> float:
        return (self.top + self.bottom) / 2


def page_lines(document: Any) -> dict[int, list[Line]]:
    """Every text item of a native PDF document as a line, by page number."""
    lines: dict[int, list[Line]] = defaultdict(list)
    for item in document.texts:
        if not item.text.strip() or not item.prov:
            continue
        prov = item.prov[0]
        page = document.pages.get(prov.page_no)
        if page is None:
            continue
        box = prov.bbox.to_top_left_origin(page_height=page.size.height)
        lines[prov.page_no].append(Line(prov.page_no, item.text.strip(), box.l, box.t, box.r, box.b))
    return lines


def is_ocr_page(lines: list[Line], width: float, height: float) -> bool:
    """A page read by OCR: its text comes as paragraphs boxed by the whole page, not as lines."""
    area = max(width * height, 1.0)
    return any((line.right - line.left) * line.height >= OCR_PAGE_SHARE * area for line in lines)


BULLETS = ("•", "◦", "▪", "–", "‣", "·", "- ", "* ", "\uf0b7", "\u25cf", "\u25a0", "\u2013 ")


def starts_with_bullet(text: str) -> bool:
    """The line opens a list item ("• Name of the file")."""
    return text.lstrip().startswith(BULLETS)


_SPACES = re.compile(r"\s+")
_NON_WORD = re.compile(r"[^\w\s]")
_DIGITS = re.compile(r"\d+")


def normalized(text: str) -> str:
    """Lower case, punctuation dropped, spaces collapsed: for comparing lines with titles."""
    return _SPACES.sub(" ", _NON_WORD.sub(" ", text.lower())).strip()


def without_digits(text: str) -> str:
    return _DIGITS.sub("#", normalized(text))
