"""One line OCR read on a page: its box, text and type's measures (docs/ingester.md, "Scanned pages (OCR)")."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OcrLine:
    """One box the detector found and the text read in it, in pixels of the image read
    (top-left origin); ``score``: the recogniser's confidence."""

    left: float
    top: float
    right: float
    bottom: float
    text: str
    score: float
    boxed: float = 0.0  # the width of the boxes of a line merged from several, gaps left out (``rows``)
    stroke: float = 0.0  # the thickness of the type's strokes, in pixels (``ocr_headings``)

    @property
    def height(self) -> float:
        return max(self.bottom - self.top, 1.0)

    @property
    def pitch(self) -> float:
        """The width of the line's characters, on average: a measure of its type size (the gaps
        between the boxes of a table's row left out)."""
        return max(self.boxed or self.right - self.left, 1.0) / max(len(self.text.replace(" ", "")), 1)
