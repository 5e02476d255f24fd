"""The heading levels of a laid-out PDF, settled over the whole document (docs/ingester.md, "PDF layout").

Each heading first gets a level from its own signals (``layout_headings``: the
outline, else the rank of its font size). Two document-wide rules then settle them:

- numbering: in a document without an outline, a numbered heading ("3", "3.2",
  "3.2.1", "A.1", "Chapter 3 ..."; in a document whose sections are numbered in roman,
  an outline: "II.", "A.", "1.", "a.") sits at the level of its numbering depth, so that a chapter
  set a point larger on one page than on another, or at the size of its
  sections, still stands above them. A depth takes the most prominent level its
  headings have, and always comes under the depth above it; an unnumbered
  heading less prominent than the chapters joins the deepest numbered level at
  or above its own, one less prominent than every numbered heading (a paper's
  unnumbered italic subsubsections) comes under the deepest, and one more
  prominent (the document's title) stays above;
- compaction: the levels in use become 1, 2, 3, ... in their order, so the
  top heading of a document is at level 1 and no level is skipped.
"""

from __future__ import annotations

import re

MIN_NUMBERED = 3  # numbered headings a document needs for numbering to set levels
_CHAPTER = re.compile(
    r"(?i)^chapter\s+(?:\d+|[ivxlc]+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen"
    r"|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty)\b\.?\s+\S"
)
_NUMBER = re.compile(r"^(?:appendix\s+)?((?:\d+|[A-Z])(?:\.\d+)*)\.?\s+\S", re.IGNORECASE)


def numbering_depth(text: str) -> int | None:
    """How deep a heading's numbering goes ("3" 1, "3.2.1" 3, "A.1" 2, "Chapter 1 Overview" and
    "CHAPTER ONE SCOPE" 1), None when unnumbered. A lone letter numbers an appendix only when
    the word says so ("Appendix A")."""
    if _CHAPTER.match(text.strip()):
        return 1
    found = _NUMBER.match(text.strip())
    if found is None:
        return None
    number = found.group(1)
    if number.isalpha() and not text.strip().lower().startswith("appendix"):
        return None
    return number.count(".") + 1


def settled_levels(headings: list[tuple[str, int]], *, by_numbering: bool) -> list[int]:
    """The levels of ``headings`` (text, level from its own signals), settled document-wide."""
    levels = [level for _, level in headings]
    if by_numbering:
        levels = _by_numbering(headings)
    ranks = {level: rank for rank, level in enumerate(sorted(set(levels)), 1)}
    return [ranks[level] for level in levels]


# A physics journal's or a report's outline numbering: "II. METHODS" over "A. Setup" over
# "1. Samples" over "a. Purity"; roman numbers of sections up to 39, so "C. Results" is a letter
_OUTLINE = (
    (re.compile(r"^(?=[IVX])X{0,3}(?:IX|IV|V?I{0,3})\.\s+\S"), 1),
    (re.compile(r"^appendix\s+(?:[A-Z]|\d+)\b[.:]?(?:\s+\S|$)", re.IGNORECASE), 1),
    (re.compile(r"^[A-Z]\.\s+\S"), 2),
    (re.compile(r"^\d+\.\s+\S"), 3),
    (re.compile(r"^[a-z]\.\s+\S"), 4),
)
_ROMAN = _OUTLINE[0][0]
MIN_ROMAN = 2  # sections numbered in roman (one past "I.") a document needs for its numbering to read as an outline


def outline_depth(text: str) -> int | None:
    """How deep a heading sits in an outline numbering ("IV." 1, "B." 2, "3." 3, "c." 4), None
    when unnumbered."""
    stripped = text.strip()
    return next((depth for pattern, depth in _OUTLINE if pattern.match(stripped)), None)


def _by_numbering(headings: list[tuple[str, int]]) -> list[int]:
    romans = [text.strip() for text, _ in headings if _ROMAN.match(text.strip())]
    outline = len(romans) >= MIN_ROMAN and any(not text.startswith("I.") for text in romans)  # "I." alone may be a letter
    depth_of = outline_depth if outline else numbering_depth
    depths = [depth_of(text) for text, _ in headings]
    numbered = [(depth, level) for depth, (_, level) in zip(depths, headings, strict=True) if depth is not None]
    if len(numbered) < MIN_NUMBERED:
        return [level for _, level in headings]
    of_depth: dict[int, int] = {}
    for depth in sorted({d for d, _ in numbered}):
        prominent = min(level for d, level in numbered if d == depth)
        above = of_depth.get(depth - 1, max((v for k, v in of_depth.items() if k < depth), default=0))
        of_depth[depth] = max(prominent, above + 1)
    used = sorted(of_depth.values())
    settled = []
    for depth, (_, level) in zip(depths, headings, strict=True):
        if depth is not None:
            settled.append(of_depth[depth])
        elif level < used[0]:
            settled.append(level)
        elif level > used[-1]:
            settled.append(used[-1] + 1)  # set less prominently than every numbered heading: under them
        else:
            settled.append(max(v for v in used if v <= level))
    return settled
