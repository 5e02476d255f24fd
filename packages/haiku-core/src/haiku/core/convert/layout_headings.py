"""Which lines of a PDF are section headings, and at what level (docs/ingester.md, "PDF layout").

Four signals, measured on real manuals (bench/pdf_layout.py):

- the font size: a line set larger than the body text (the size most of the
  document's characters have) and shaped like a heading (short, not ending a
  sentence) is a heading; the larger the size, the higher its level;
- the PDF outline (bookmarks), where the file has one: a line that reads as an
  entry of the outline on that entry's page is a heading at the outline's level;
- the layout model's ``title`` regions, for headings set at the body size
  (bold run-in headings): a short line alone in such a region;
- the weight: a short bold line standing alone above a paragraph (no other line
  on its row, a regular line right under it) heads it, even at the body size.

The sizes are type sizes read from the text layer's characters (``layout_fonts``).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from haiku.core.convert.layout_lines import Line, normalized, starts_with_bullet
from haiku.core.convert.titles import cover_word

SIZE_RATIO = 1.18  # a heading's line is at least this much taller than the body text's
# Below this width per character, in type sizes (line heights where no size is read), a "line"
# is two lines the text layer merged into one box (tall, narrow for its text) or glyphs that are
# no text: not a large font. Headings measure 0.46 or more.
MIN_CHAR_WIDTH = 0.3
MAX_HEADING_CHARS = 150
MAX_HEADING_WORDS = 20
MAX_LEVEL = 6
SIGNALS = frozenset({"size", "outline", "title", "bold"})  # all by default; bench/pdf_layout.py measures each alone
BOLD_HEAD_SIZE = 0.95  # a bold heading at the body size is set no smaller than this share of it
TITLE_PAGES = 3  # a title page is one of the document's first pages
TITLE_PAGE_BODY_LINES = 3  # ... with fewer lines at the body size than this
BODY_LINE_SHARE = 0.7  # a line of body text this share of a column's width or wider: the body has begun
_NUMBERING = re.compile(r"^(appendix\s+)?(\d+|[a-z])(\.\d+)*\.?\s+", re.IGNORECASE)
_NUMBERED = re.compile(
    r"^(?:appendix\s+(?:\d+|[a-z])\b[.:]?|(?:\d+(?:\.\d+)*\.?|[a-z](?:\.\d+)+\.?|[a-z]\.|[ivxlc]+\.))\s+\S", re.IGNORECASE
)
NUMBERED_HEAD_SIZE = 0.85  # ... and a numbered bold head no smaller than this share
_LEADERS = re.compile(r"(\.\s?){3,}\s*\S*$")  # a table-of-contents line: "Title . . . . 24"
_LETTER = re.compile(r"[^\W\d_]")
# Lines set like headings that a reader does not take for one: a callout box's label, a release
# line or copyright notice, a date (a title page's, a letter's); and a cover's word, an issue or page number (``cover_word``).
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_NOT_HEADINGS = re.compile(
    r"(?i)^(?:(?:note|tip|hint|caution|warning|important|attention|danger|remark|notice):?"
    r"|(?:release|version|revision|rev\.)\s*\d+(?:\.\d+)*[a-z]?(?:,?\s+(?:of\s+)?[\w ,.]*\d{4})?"
    r"|(?:copyright\s+(?:©|\(c\)|\d{4})|©\s*\d{4}|\(c\)\s*\d{4}).*"
    rf"|(?:[a-z]+day,?\s+)?(?:\d{{1,2}}\.?\s+)?{_MONTH}\s+(?:\d{{1,2}}(?:st|nd|rd|th)?,?\s+)?\d{{4}}"
    r"|\d{4}-\d{2}-\d{2}|\d{1,2}[./]\d{1,2}[./]\d{2,4}"
    # a paper's keyword line: "Key words: keyword1, keyword2", "Index Terms—…", "PACS numbers: …"
    r"|(?:key\s*words|index\s+terms|pacs(?:\s+numbers)?|subject\s+classification)\s*[:.—–-].*"
    # a figure's or table's label set above its caption ("Figure 1" over "A Complex Table")
    r"|(?:fig(?:ure)?|table|tab|listing|algorithm|scheme|chart|exhibit)\.?\s*\d+[a-z]?"
    # a theorem's label, its name in brackets: "Theorem 1 (DOI links are required)"
    r"|(?:theorem|lemma|corollary|proposition|definition|conjecture|claim|proof)(?:\s+[\d.]+)?\.?(?:\s*\(.*\))?\.?)$"
)
# "Chapter 1", "CHAPTER", "ONE", "Part II": the label set above a chapter's title, part of it
_CHAPTER_LABEL = re.compile(
    r"(?i)^(?:(?:chapter|part|appendix|book|section)(?:\s+(?:\d+|[ivxlc]+|[a-z]))?"
    r"|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen"
    r"|seventeen|eighteen|nineteen|twenty)\.?$"
)


@dataclass(frozen=True)
class OutlineEntry:
    level: int  # 1 for the outline's top entries
    title: str
    page_no: int


def pdf_outline(pdf: Any) -> list[OutlineEntry]:
    """The bookmarks of a pypdfium2 document that point at a page; none when unreadable."""
    entries: list[OutlineEntry] = []
    try:
        for bookmark in pdf.get_toc(max_depth=MAX_LEVEL):
            dest = bookmark.get_dest()
            index = dest.get_index() if dest is not None else None
            title = (bookmark.get_title() or "").strip()
            if index is not None and title:
                entries.append(OutlineEntry(bookmark.level + 1, title, index + 1))
    except Exception:  # a broken outline is no outline: the other signals still apply
        return []
    return entries


def heading_shaped(text: str) -> bool:
    """Short, with a letter, and not the end of a sentence or a clause, a list item, a callout's
    label ("Note", "Tip"), a cover's word or a date."""
    words = text.split()
    if not 0 < len(text) <= MAX_HEADING_CHARS or len(words) > MAX_HEADING_WORDS or not _LETTER.search(text):
        return False
    if text.endswith((",", ";", ":", "-", "\u00ad")) or _LEADERS.search(text) or starts_with_bullet(text):
        return False
    if _NOT_HEADINGS.match(text.strip()) or cover_word(text):
        return False
    return not (text.endswith(".") and len(words) > 6)


def numbered(text: str) -> bool:
    """``text`` opens with a section's number: "2.1 Scope", "A. Methods", "IV. Results"."""
    return bool(_NUMBERED.match(text.strip()))


def chapter_label(text: str) -> bool:
    """``Chapter 1``, ``CHAPTER``, ``ONE``: a line that labels the chapter title set under it."""
    return bool(_CHAPTER_LABEL.match(text.strip()))


def title_key(text: str) -> str:
    return normalized(_NUMBERING.sub("", text.strip()))


def _measure(lines: list[Line], body_size: float) -> float:
    """The width of a full line of body text (a column's width): the width most of the body's
    text is set in, read as the 75th percentile of its lines' widths."""
    widths = sorted(x.right - x.left for x in lines if abs(_size(x) - body_size) <= 0.05 * body_size)
    return widths[(3 * len(widths)) // 4] if widths else 0.0


def _size(line: Line) -> float:
    """The line's type size (``layout_fonts``), else its box's height, to the half point."""
    return line.size if line.size > 0 else round(line.height * 2) / 2


class HeadingRule:
    """The heading levels of one document, from all its lines and its outline."""

    def __init__(self, lines: list[Line], outline: list[OutlineEntry], signals: frozenset[str] = SIGNALS) -> None:
        self._signals = signals
        if "outline" not in signals:
            outline = []
        weights: Counter[float] = Counter()
        for line in lines:
            weights[_size(line)] += len(line.text)
        self.body_size = weights.most_common(1)[0][0] if weights else 0.0
        self.measure = _measure(lines, self.body_size)  # the width of a full line of body text
        sizes = {_size(line) for line in lines if self._large(line) and heading_shaped(line.text)}
        self._size_levels = {size: min(rank, MAX_LEVEL) for rank, size in enumerate(sorted(sizes, reverse=True), 1)}
        self._outline: dict[tuple[int, str], int] = {}
        for entry in outline:
            key = title_key(entry.title)
            if key:
                self._outline.setdefault((entry.page_no, key), min(entry.level, MAX_LEVEL))
        self._learn_levels_from_outline(lines)
        self.title_page, self._title_size = self._find_title_page(lines)
        self._run_on = self._find_run_on(lines)
        self._titles, self._bylines = self._find_bylines(lines)
        # the title page's title stands above every other heading
        self._below_title = 1 if self.title_page is not None else 0

    def _find_title_page(self, lines: list[Line]) -> tuple[int | None, float]:
        """The page (and the type size of the title on it) where a document opens with a title
        page: the first of its first pages to hold a line in a heading's size, when that page has
        almost no body text (a title, a subtitle, authors, a date) and other pages follow it (a
        one-page memo's heading is its own). None without one."""
        if any(line.size > 0 for line in lines):
            lines = [line for line in lines if line.size > 0]  # a scanned cover's OCR text is no title page
        if not lines:
            return None, 0.0
        first, last = min(line.page_no for line in lines), max(line.page_no for line in lines)
        for page_no in range(first, min(first + TITLE_PAGES, last)):  # a title page has pages after it
            on_page = [line for line in lines if line.page_no == page_no]
            large = [line for line in on_page if self._large(line) and heading_shaped(line.text)]
            if not large:
                continue
            body = [line for line in on_page if not self._large(line) and _size(line) <= self.body_size * 1.05]
            if len(body) >= TITLE_PAGE_BODY_LINES:
                return None, 0.0
            return page_no, max(_size(line) for line in large)
        return None, 0.0

    def _find_run_on(self, lines: list[Line]) -> set[Line]:
        """Large lines ending in a colon or a comma that run on into a large line of their size
        right under them: a title set on two lines ("The Strucplot Framework:" over "Visualizing
        Multi-way Contingency Tables with vcd"), whose first line alone reads like a label."""
        large = [x for x in lines if self._large(x) and x.text.endswith((":", ","))]
        run_on = set()
        for line in large:
            for other in lines:
                below = 0 <= other.top - line.bottom <= line.height
                beside = min(line.right, other.right) > max(line.left, other.left)
                if other.page_no == line.page_no and below and beside and _size(other) == _size(line):
                    run_on.add(line)
                    break
        return run_on

    def _find_bylines(self, lines: list[Line]) -> tuple[set[Line], set[Line]]:
        """The title's lines (the largest heading-shaped lines of the first pages, on the page of
        the first of them), and the lines set under the title before its first body line: authors
        and their affiliations, a date, a subtitle (a paper's "Achim Zeileis" in bold under its
        title, an article's authors set large, a conference paper's grid of authors with their
        affiliations in short centred lines), which head no section. The body begins at a
        regular line of the body's size that runs the width of a column (``_measure``)."""
        opening = min((x.page_no for x in lines), default=0)
        first = [x for x in lines if x.page_no < opening + TITLE_PAGES]
        large = [x for x in first if self._large(x) and heading_shaped(x.text.rstrip("*∗†‡ "))]
        if not large:
            # a title set bold at the body's size: its first such line, which may carry a
            # footnote's mark; no byline is read under it (it may be a first section's heading)
            bold = [x for x in first if x.page_no == opening and x.bold and heading_shaped(x.text.rstrip("*∗†‡ "))]
            return ({min(bold, key=lambda x: x.top)} if bold else set()), set()
        top_size = max(_size(x) for x in large)
        title = min((x for x in large if _size(x) == top_size), key=lambda x: (x.page_no, x.top))
        titles = {x for x in large if x.page_no == title.page_no and _size(x) == top_size}
        under: set[Line] = set()
        last: Line | None = None
        for line in sorted((x for x in first if x.page_no == title.page_no and x.top > title.bottom), key=lambda x: x.top):
            if _size(line) >= top_size:
                continue  # the title's own next line
            regular = _size(line) <= self.body_size * 1.05 and not line.bold and not line.italic
            if regular and line.right - line.left >= BODY_LINE_SHARE * self.measure:
                # the body begins; a large line right above it heads it ("Introduction" under a
                # title with no byline), where authors set large stand above their affiliations
                if last is not None and self._large(last) and line.top - last.bottom < 2 * last.height:
                    under.discard(last)
                break
            if _NUMBERING.match(line.text):
                break  # a section opens straight under the title
            under.add(line)
            last = line
        return titles, under

    def is_title(self, line: Line) -> bool:
        """``line`` is a line of the document's title (``_find_bylines``)."""
        return line in self._titles

    def _learn_levels_from_outline(self, lines: list[Line]) -> None:
        """Where the outline names headings, their size takes the outline's level, and a size
        the outline does not name comes one level under the nearest named size above it."""
        learned: dict[float, int] = {}
        for line in lines:
            level = self._outline_level(line)
            if level is not None and self._large(line):
                learned[_size(line)] = min(learned.get(_size(line), MAX_LEVEL), level)
        if not learned:
            return
        for size in self._size_levels:
            above = [named for named in learned if named >= size]
            if above:
                nearest = min(above)
                self._size_levels[size] = learned[nearest] if nearest == size else min(learned[nearest] + 1, MAX_LEVEL)
            else:
                self._size_levels[size] = min(learned.values())

    def _outline_level(self, line: Line) -> int | None:
        key = title_key(line.text)
        for page_no in (line.page_no, line.page_no - 1, line.page_no + 1):
            if (page_no, key) in self._outline:
                return self._outline[(page_no, key)]
        return None

    def _large(self, line: Line) -> bool:
        if self.body_size <= 0 or _size(line) < self.body_size * SIZE_RATIO:
            return False
        if len(line.text) > 3 and line.bottom - line.top > line.right - line.left:
            return False  # set sideways: a cover's or a margin's banner, no heading
        # a box's height can be two merged lines'; a type size read from the characters cannot,
        # but a line far narrower than its size sets is no text either (a decorative font's glyphs
        # drawn large, their names read as "x51")
        return line.right - line.left >= MIN_CHAR_WIDTH * _size(line) * len(line.text)

    def level(self, line: Line, *, in_title_region: bool, alone: bool = False, runs_on: bool = False) -> int | None:
        """The line's heading level, or None when it is not a heading (a line ending in a
        footnote marker is a body line; on a title page, only the title is a heading).
        ``alone``: the line stands alone above a paragraph (``layout_blocks``); then, bold
        (or italic and a little larger) and short, it heads that paragraph even at the body
        size, an italic head a level under a bold one. ``runs_on``: the line's head carries on onto
        the next line (``layout_styled_heads``), so it may end in a colon."""
        run_on = runs_on or line in self._run_on
        shaped = heading_shaped(line.text) or (run_on and heading_shaped(line.text[:-1]))
        # a footnote's mark ends a body line, or a paper's title (its ``\\thanks``)
        if not shaped or (line.marker and line not in self._titles) or line.math:
            return None
        if line.page_no == self.title_page:
            return 1 if self._large(line) and _size(line) >= self._title_size else None
        if line in self._bylines:
            return None
        level = self._outline_level(line)
        if level is not None:
            return min(level + self._below_title, MAX_LEVEL)
        if "size" in self._signals and self._large(line):
            return min(self._size_levels.get(_size(line), MAX_LEVEL) + self._below_title, MAX_LEVEL)
        short = len(line.text.split()) <= 12 and not line.text.endswith(".")
        # a numbered bold head may be set a size under the body's (a physics journal's "I. METHODS")
        floor = NUMBERED_HEAD_SIZE if line.bold and numbered(line.text) else BOLD_HEAD_SIZE
        body_sized = _size(line) >= floor * self.body_size
        # a monospaced line set at the body size is code (a paper echoes its R input in bold)
        # unless numbered as a section
        code = line.mono and not _NUMBERING.match(line.text)
        bold_head = alone and body_sized and not code  # bold, or italic and larger (``layout_styled_heads``)
        # the model's title regions also fall on display formulas (their symbols set small), on
        # code echoed in a paper (monospaced, regular) and on an author's affiliation: a line
        # there heads a section when it is set apart from the body (bold, italic, larger, capitals)
        styled = line.italic or line.text.isupper()
        set_apart = line.bold or (styled and not line.mono) or _size(line) > self.body_size
        title_head = in_title_region and body_sized and set_apart and not code
        if short and (("title" in self._signals and title_head) or ("bold" in self._signals and bold_head)):
            under = 2 if line.italic and not line.bold else 1
            return min(len(self._size_levels) + under + self._below_title, MAX_LEVEL)
        return None
