"""The heading levels of a laid-out PDF, settled over the whole document (docs/ingester.md, "PDF layout").

Each heading first gets a level from its own signals (``layout_headings``: the
outline, else the rank of its font size). Two document-wide rules then settle them:

- numbering: in a document without an outline, a numbered heading ("3", "3.2",
  "3.2.1", "A.1", "Chapter 3 ...") sits at the level of its numbering depth, so that a chapter
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


def _by_numbering(headings: list[tuple[str, int]]) -> list[int]:
    depths = [numbering_depth(text) for text, _ in headings]
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
