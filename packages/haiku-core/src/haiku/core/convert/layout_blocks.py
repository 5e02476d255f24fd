"""A PDF page's lines and layout regions made into blocks in reading order (docs/ingester.md, "PDF layout").

Each line goes to the region holding its middle (a table before a figure
before a caption before a title before text); then:

- a line in the top or bottom band of the page is a page header or footer when
  the layout model says so (unless it is a heading), or when the same text
  (numbers aside) recurs in that band on other pages, and the page has text
  outside those bands; a page number is one
  there or as the page's first or last line;
- the lines of a table of contents (``furniture.contents_lines``: a run of
  entries ending in page numbers or dot leaders) are kept as furniture, each
  line on its own;
- the lines inside a table drawn with ruling lines (``layout_rulings``) are
  that table, its cells from the grid (the rules say where a cell ends, which
  the lines' positions only guess: a header wrapped on two lines, a cell
  left empty), whether or not the layout model saw a table there;
- the lines of a table region whose runs form a grid are one table, and so
  are the other lines between the rules of a table set without column rules
  (``layout_rulings.rule_bands``) when their runs form one of three columns or more;
- a heading-shaped line the heading rule accepts is a heading, unless its row
  ends in a page number (a table of contents' entry) (a heading that
  wraps is one heading, and the label set above a chapter's title, "Chapter 1"
  or "CHAPTER ONE", is part of it);
- the lines of a caption region are one caption;
- the other lines are paragraphs: runs of lines of one region, one under the
  other, without a gap wider than a line's height or a bullet starting a line.

Blocks are ordered top to bottom; where the page has two columns side by side,
the left column is read before the right one, between the full-width blocks (the
right one first on a page whose letters are mostly right-to-left: Arabic, Hebrew).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from haiku.core.convert.furniture import PAGE_NUMBER, contents_entries, contents_lines
from haiku.core.convert.layout_bidi import rtl_dominant
from haiku.core.convert.layout_headings import HeadingRule, chapter_label, numbered
from haiku.core.convert.layout_lines import Line, starts_with_bullet, without_digits
from haiku.core.convert.layout_model import Region
from haiku.core.convert.layout_rulings import RuledTable
from haiku.core.convert.layout_styled_heads import PARAGRAPH_GAP, styled_heads
from haiku.core.convert.layout_tables import table_data

EDGE_BAND = 0.1  # the share of the page height at its top and bottom where headers and footers sit
REGION_EDGE_BAND = 0.15  # the same, for lines the layout model calls a header or footer
RECURRING_PAGES = 3  # edge text on this many pages (numbers aside) is a running header or footer
FIGURE_MAX_LINES = 6  # a "figure" holding more text lines than this is text the model mistook
_CAPTION = re.compile(r"^(fig(ure)?|table|tab)\.?\s*\d+[a-z]?\s*[.:]", re.IGNORECASE)
HEADING_BLOCK_WORDS = 30  # a "heading" of more words than this is a paragraph set in large type
LABEL_DISTANCE = 6.0  # line heights between a chapter's label ("Chapter 1") and its title
CAPTION_DISTANCE = 2.0  # line heights between a "Figure 1: ..." paragraph and its picture or table
_PRIORITY = {"table": 0, "figure": 1, "figure_caption": 2, "table_caption": 2, "title": 3, "header": 4, "footer": 4}


@dataclass
class Block:
    kind: str  # page_header, page_footer, contents, heading, text, caption, table, picture
    lines: list[Line] = field(default_factory=list)
    level: int = 0
    box: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)  # left, top, right, bottom
    table: Any = None  # docling TableData
    picture: Any = None  # the native PictureItem, when the PDF embeds the picture's bitmap
    caption_of: str = ""  # figure or table

    def __post_init__(self) -> None:
        if self.lines:
            self._fit()

    def _fit(self) -> None:
        self.box = (
            min(x.left for x in self.lines), min(x.top for x in self.lines),
            max(x.right for x in self.lines), max(x.bottom for x in self.lines),
        )

    def add(self, line: Line) -> None:
        self.lines.append(line)
        self._fit()

    @property
    def text(self) -> str:
        return join_lines(self.lines)


def join_lines(lines: list[Line]) -> str:
    """The lines of a paragraph as one text; a word hyphenated at a line's end is joined."""
    text = ""
    for line in lines:
        if text.endswith(("-", "\u00ad")) and line.text[:1].islower():
            text = text[:-1] + line.text
        else:
            text = f"{text} {line.text}" if text else line.text
    return text


def recurring_edge_texts(lines_by_page: dict[int, list[Line]], heights: dict[int, float]) -> set[tuple[str, float]]:
    """Texts (numbers aside), with their type size, in the top or bottom band of at least
    ``RECURRING_PAGES`` pages."""
    pages: Counter[tuple[str, float]] = Counter()
    for page_no, lines in lines_by_page.items():
        height = heights[page_no]
        pages.update({edge_key(x) for x in lines if _starts_at_edge(x, height)})
    return {key for key, count in pages.items() if count >= RECURRING_PAGES and key[0]}


def edge_key(line: Line) -> tuple[str, float]:
    """A line's text (numbers aside) and its size: a paper's running header repeats its title
    in small type on every page, and the title itself, set large under it on the first page,
    is no running header."""
    return without_digits(line.text), round(line.size or line.height)


def _edge(line: Line, height: float, band: float) -> bool:
    return line.bottom <= band * height or line.top >= (1 - band) * height


def _starts_at_edge(line: Line, height: float) -> bool:
    """``line`` begins in the page's top or bottom band: a running banner of three large lines
    reaches under the band with its last."""
    return line.top <= EDGE_BAND * height or line.bottom >= (1 - EDGE_BAND) * height


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> float:
    """The share of the smaller box that the two boxes share."""
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    if width <= 0 or height <= 0:
        return 0.0
    smaller = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return width * height / max(smaller, 1e-6)


@dataclass
class PageLayout:
    """The blocks of one page."""

    width: float
    height: float
    regions: list[Region]
    headings: HeadingRule
    recurring: set[tuple[str, float]]  # ``edge_key``s of running headers and footers
    pictures: list[tuple[Any, tuple[float, float, float, float]]]  # native pictures and their boxes
    ruled: list[RuledTable] = field(default_factory=list)  # tables drawn with ruling lines
    runs: dict[Line, list[Line]] = field(default_factory=dict)  # lines of table regions split into runs
    bands: list[tuple[float, float, float, float]] = field(default_factory=list)  # between a table's rules

    def blocks(self, lines: list[Line]) -> list[Block]:
        region_of = {id(line): self._region(line) for line in lines}
        ruled = self.ruled
        in_ruled: dict[int, list[Line]] = {}
        outermost = {id(min(lines, key=lambda x: x.top)), id(max(lines, key=lambda x: x.bottom))} if lines else set()
        body = any(not _edge(line, self.height, REGION_EDGE_BAND) for line in lines)
        figures = self._figures(lines, region_of)
        blocks: list[Block] = []
        rest: list[Line] = []
        tables: dict[int, list[Line]] = {}
        captions: dict[int, list[Line]] = {}
        for line in lines:
            region = region_of[id(line)]
            label = region.label if region is not None else "text"
            furniture = self._furniture(line, label, outermost=id(line) in outermost, body=body)
            grid = next((i for i, t in enumerate(ruled) if _holds(t.box, line)), None)
            if furniture:
                blocks.append(Block(furniture, [line]))
            elif grid is not None:
                in_ruled.setdefault(grid, []).append(line)
            elif label == "table":
                tables.setdefault(id(region), []).append(line)
            elif label in ("figure_caption", "table_caption") and not self._heading_in_caption(line):
                captions.setdefault(id(region), []).append(line)
            elif (band := next((i for i, b in enumerate(self.bands) if _holds(b, line)), None)) is not None:
                tables.setdefault(-1 - band, []).append(line)
            else:
                rest.append(line)
        for grid, grid_lines in in_ruled.items():
            table = Block("table", sorted(grid_lines, key=lambda x: (x.top, x.left)), table=ruled[grid].data)
            table.box = ruled[grid].box
            blocks.append(table)
        for key, region_lines in tables.items():
            runs = [run for line in region_lines for run in self.runs.get(line, [line])]
            # between rules alone, with no layout model's table to vouch for it, a table has three
            # columns at least: two are a note's label and text, a listing's line numbers and code
            data = table_data(runs, self.height, min_columns=3 if key < 0 else 2)
            if data is None:
                rest.extend(region_lines)
            else:
                blocks.append(Block("table", sorted(region_lines, key=lambda x: (x.top, x.left)), table=data))
        for region_lines in captions.values():
            region = region_of[id(region_lines[0])]
            of = "table" if region is not None and region.label == "table_caption" else "figure"
            blocks.append(Block("caption", sorted(region_lines, key=lambda x: (x.top, x.left)), caption_of=of))
        contents = contents_lines(rest)  # a table of contents' lines: kept, out of the chunks
        blocks += [Block("contents", [line]) for line in rest if id(line) in contents]
        rest = [line for line in rest if id(line) not in contents]
        blocks += self._headings_and_paragraphs(rest, region_of, contents_entries(rest))
        blocks += figures
        _captions_by_wording(blocks)
        return reading_order(blocks, self.width, rtl=rtl_dominant(" ".join(line.text for line in lines)))

    def _heading_in_caption(self, line: Line) -> bool:
        """A line of a caption region that is no caption's: the document's title (the model takes a
        paper's title over its teaser figure for the figure's caption) or a bold numbered head
        ("1. Wide equations" beside a display formula)."""
        if _CAPTION.match(line.text):
            return False
        return self.headings.is_title(line) or (line.bold and numbered(line.text))

    def _region(self, line: Line) -> Region | None:
        holding = [r for r in self.regions if r.holds(line.cx, line.cy)]
        if not holding:
            return self._page_edge_region(line)
        return min(holding, key=lambda r: (_PRIORITY.get(r.label, 5), -r.score))

    def _page_edge_region(self, line: Line) -> Region | None:
        """The header or footer region of a line whose middle falls between two of them: a running
        header's two halves ("CHAPTER 1. …" and "1.6. …") that the text layer reads as one line."""
        box = (line.left, line.top, line.right, line.bottom)
        edges = [r for r in self.regions if r.label in ("header", "footer")]
        covered = [(r, share) for r in edges if (share := _overlap(box, (r.left, r.top, r.right, r.bottom))) > 0.5]
        width = sum(max(min(line.right, r.right) - max(line.left, r.left), 0.0) for r, _ in covered)
        if not covered or width < 0.5 * (line.right - line.left):
            return None
        return max(covered, key=lambda c: c[1])[0]

    def _figures(self, lines: list[Line], region_of: dict[int, Region | None]) -> list[Block]:
        blocks = [Block("picture", picture=item, box=box) for item, box in self.pictures]
        for region in self.regions:
            if region.label != "figure":
                continue
            box = (region.left, region.top, region.right, region.bottom)
            inside = sum(1 for line in lines if region_of[id(line)] is region)
            if inside > FIGURE_MAX_LINES or any(_overlap(box, b.box) > 0.5 for b in blocks):
                continue
            blocks.append(Block("picture", box=box))
        return blocks

    def _furniture(self, line: Line, label: str, *, outermost: bool, body: bool) -> str:
        """``body``: the page has text outside its top and bottom bands (a page of one line at
        its top has no header, even when the line recurs on every page: that line is its text)."""
        kind = "page_header" if line.cy < self.height / 2 else "page_footer"
        if body and _starts_at_edge(line, self.height) and edge_key(line) in self.recurring:
            return kind
        if PAGE_NUMBER.match(line.text) and (outermost or _edge(line, self.height, EDGE_BAND)):
            return kind
        if label in ("header", "footer") and body and _edge(line, self.height, REGION_EDGE_BAND):
            # a chapter heading (or its label, "CHAPTER") at the top of its page is no running header
            heading = self.headings.level(line, in_title_region=False) is not None or chapter_label(line.text)
            return "" if heading else kind
        return ""

    def _headings_and_paragraphs(
        self, lines: list[Line], region_of: dict[int, Region | None], contents: set[int]
    ) -> list[Block]:
        """``contents``: the ids of table-of-contents entries, which are no headings."""
        blocks: list[Block] = []
        open_paragraphs: list[Block] = []
        styled = styled_heads(lines, self.headings.body_size, self.headings.measure)
        for line in sorted(lines, key=lambda x: (x.top, x.left)):
            region = region_of[id(line)]
            in_title = region is not None and region.label == "title"
            level = None if id(line) in contents else self.headings.level(
                line, in_title_region=in_title, alone=id(line) in styled.heads, runs_on=id(line) in styled.runs_on
            )
            if level is not None:
                previous = blocks[-1] if blocks else None
                if previous is not None and _labels(previous, line):
                    previous.kind, previous.level = "heading", min(level, previous.level or level)
                    previous.add(line)
                    if previous in open_paragraphs:
                        open_paragraphs.remove(previous)
                elif not numbered(line.text) and (
                    wrapped := _open_heading([b for b in blocks[-8:] if b.level == level], line)
                ):
                    # a heading wrapped onto a second line (not "A.1 Part One" under "A RESEARCH METHODS")
                    wrapped.add(line)
                else:
                    blocks.append(Block("heading", [line], level=level))
                continue
            carried = _open_heading([b for b in blocks[-8:] if id(b.lines[-1]) in styled.runs_on], line)
            if carried is not None:
                carried.add(line)  # a head's second line, set smaller than a head of its own would be
                continue
            for paragraph in reversed(open_paragraphs[-8:]):
                last = paragraph.lines[-1]
                if region_of[id(last)] is region and _follows(last, line) and not starts_with_bullet(line.text):
                    paragraph.add(line)
                    break
            else:
                paragraph = Block("text", [line])
                open_paragraphs.append(paragraph)
                blocks.append(paragraph)
        for block in blocks:
            if block.kind == "heading" and len(block.text.split()) > HEADING_BLOCK_WORDS:
                block.kind = "text"  # a paragraph set large (an abstract, a lead), no heading
        return blocks


def _captions_by_wording(blocks: list[Block]) -> None:
    """A paragraph reading "Figure 1: ..." or "Table 2. ..." next to a picture or table is its caption."""
    targets = [b for b in blocks if b.kind in ("picture", "table")]
    for block in blocks:
        if block.kind != "text" or not _CAPTION.match(block.text):
            continue
        reach = CAPTION_DISTANCE * block.lines[0].height
        for target in targets:
            gap = max(target.box[1] - block.box[3], block.box[1] - target.box[3])
            if gap <= reach:
                block.kind = "caption"
                block.caption_of = "table" if target.kind == "table" else "figure"
                break


def _open_heading(recent: list[Block], line: Line) -> Block | None:
    """The last heading of ``recent`` blocks whose last line ``line`` follows: in two columns,
    the other column's lines come between a heading's two lines."""
    for block in reversed(recent):
        if block.kind == "heading" and _follows(block.lines[-1], line):
            return block
    return None


def _labels(block: Block, line: Line) -> bool:
    """``block`` is the label set above the chapter title ``line`` ("Chapter 1", "CHAPTER ONE")."""
    last = block.lines[-1]
    near = 0 <= line.top - last.bottom <= LABEL_DISTANCE * last.height
    return block.kind in ("heading", "text") and near and all(chapter_label(x.text) for x in block.lines)


def _holds(box: tuple[float, float, float, float], line: Line) -> bool:
    return box[0] <= line.cx <= box[2] and box[1] <= line.cy <= box[3]


def _follows(above: Line, below: Line) -> bool:
    """``below`` continues ``above``: under it, overlapping it sideways, no wider gap than a line, same size."""
    gap = below.top - above.bottom
    sideways = min(above.right, below.right) - max(above.left, below.left)
    same_size = abs(below.height - above.height) <= 0.25 * max(above.height, 1e-6)
    return -0.3 * above.height <= gap <= PARAGRAPH_GAP * above.height and sideways > 0 and same_size


def reading_order(blocks: list[Block], width: float, *, rtl: bool = False) -> list[Block]:
    """Headers, then the body top to bottom (left column before right where two stand side by side,
    right before left on a page of right-to-left text), then footers."""
    headers = [b for b in blocks if b.kind == "page_header"]
    footers = [b for b in blocks if b.kind == "page_footer"]
    body = sorted((b for b in blocks if b.kind not in ("page_header", "page_footer")), key=lambda b: (b.box[1], b.box[0]))
    ordered: list[Block] = []
    segment: list[Block] = []
    for block in body:
        if _side(block, width) == "full":
            ordered += _columns_first(segment, width, rtl=rtl)
            ordered.append(block)
            segment = []
        else:
            segment.append(block)
    ordered += _columns_first(segment, width, rtl=rtl)
    return headers + ordered + footers


def _side(block: Block, width: float) -> str:
    if block.box[2] <= 0.55 * width:
        return "left"
    if block.box[0] >= 0.45 * width:
        return "right"
    return "full"


def _columns_first(blocks: list[Block], width: float, *, rtl: bool) -> list[Block]:
    """Left blocks before right ones (right before left when ``rtl``) when the two sides stand next
    to each other; else top to bottom."""
    left = [b for b in blocks if _side(b, width) == "left"]
    right = [b for b in blocks if _side(b, width) == "right"]
    side_by_side = any(min(a.box[3], b.box[3]) > max(a.box[1], b.box[1]) for a in left for b in right)
    if not side_by_side:
        return blocks
    return right + left if rtl else left + right
