"""Items that stay in a document but out of its chunks (docs/ingester.md, "Formats"): tables of
contents.

They are kept as furniture, as running headers and footers are, so ``visualize``
still draws them on their page, while the markdown and the chunks, and so the
index, hold the text they point to rather than pages of dots. Three rules find them:

- a paragraph of entries with dot leaders (``2.1. NAME . . . . . . 2``), in any format;
- on a PDF page (``contents_lines``), the lines from the first entry to the last
  (an entry: a row ending in a page number set apart to its right, or a line ending
  in a dot leader) when entries are at least half of them and they give two page
  numbers or more that never go back: a contents page, its wrapped entries and
  chapter lines included;
- after a heading such as "Contents" (``move_contents_to_furniture``), the paragraphs
  made of the texts of headings that follow later in the document: a table of
  contents without page numbers.
"""

from __future__ import annotations

import re
from itertools import pairwise
from typing import Any

from haiku.core.convert.layout_lines import Line, normalized

# Six or more dots or middle dots, spaced or not: a leader, never an ellipsis.
_LEADER = re.compile(r"(?:\s?[.·]){6,}\s*|…{2,}\s*")
_PAGE = re.compile(r"(?:\d{1,4}|[ivxlcdm]{1,7})(?:\s|$)", re.IGNORECASE)
# A page number: arabic, or a well-formed roman one of front matter (i to xxxix): a chart's
# markers drawn as the letter "l" ("l", "ll") are no page numbers
PAGE_NUMBER = re.compile(
    r"^(page\s+)?([0-9]{1,4}|(?=[ivx])x{0,3}(?:ix|iv|v?i{0,3}))(\s*(/|of)\s*[0-9]{1,4})?$", re.IGNORECASE
)
# A line ending in a leader (four dots or more, spaced or not: "Loading..." ends in an ellipsis),
# a page number after it or not
_LEADER_END = re.compile(r"(?:[.·]\s?){4,}\s*(\d{1,4}|[ivxlcdm]{1,9})?\s*$", re.IGNORECASE)
CONTENTS_ENTRIES = 4  # a page's contents run holds at least this many entries
CONTENTS_SHARE = 0.5  # and entries are at least this share of its lines
_CONTENTS_HEADING = re.compile(
    r"^(?:(?:table of )?contents|inhalt(?:sverzeichnis)?|(?:table des )?mati[eè]res|[ií]ndice|sommaire|目次|目录|차례|목차)$"
)
HEADINGS_SHARE = 0.7  # a paragraph after a contents heading is contents when later headings make this share of it


def contents_heading(text: str) -> bool:
    """``text`` is a table of contents' heading: "Contents", "Table des matières", "목차"."""
    return bool(_CONTENTS_HEADING.match(normalized(text)))


def is_contents_line(text: str) -> bool:
    """Whether ``text`` is one or more table-of-contents entries: titles each followed by a dot leader
    and a page number (arabic or roman), and nothing else."""
    parts = _LEADER.split(text.strip())
    if len(parts) < 2 or not _PAGE.fullmatch(parts[-1].strip() + " "):
        return False  # no leader, or words after the last page number: prose
    return all(_PAGE.match(part) for part in parts[1:])


def contents_entries(lines: list[Line]) -> set[int]:
    """The ids of the lines whose row ends in a page number set apart to their right: entries
    of a table of contents ("2 Related work ... 3"), which repeat the headings they point at;
    none where one line alone has a number beside it (a chart's axis label "x" beside a heading)."""
    entries = set(_entry_numbers(lines))
    return entries if len(entries) >= 2 else set()


def _entry_numbers(lines: list[Line]) -> dict[int, int]:
    """The ids of the entries (``contents_entries``), each with the id of its page number."""
    numbers = [x for x in lines if PAGE_NUMBER.match(x.text)]
    entries = {}
    for line in lines:
        for number in numbers:
            overlap = min(line.bottom, number.bottom) - max(line.top, number.top)
            if number.left > line.right and overlap >= 0.5 * min(line.height, number.height):
                entries[id(line)] = id(number)
                break
    return entries


def contents_lines(lines: list[Line]) -> set[int]:
    """The ids of a PDF page's table-of-contents lines (the module's second rule), among ``lines``,
    its body lines."""
    ordered = sorted(lines, key=lambda x: (x.top, x.left))
    by_row = _entry_numbers(lines)
    by_row.update({number: number for number in by_row.values()})  # an entry's page number is its line too
    marked = [i for i, x in enumerate(ordered) if id(x) in by_row or _LEADER_END.search(x.text)]
    if len(marked) < CONTENTS_ENTRIES:
        return set()
    run = ordered[marked[0] : marked[-1] + 1]
    if len(marked) < CONTENTS_SHARE * len(run):
        return set()
    pages = [page for x in run if (page := _entry_page(x.text))]
    arabic = [int(page) for page in pages if page.isdigit()]  # roman front-matter pages restart by part
    if len(pages) < 2 or any(later < earlier for earlier, later in pairwise(arabic)):
        return set()  # no page numbers, or numbers that go back (a list, a table's column): no contents
    return {id(x) for x in run}


def _entry_page(text: str) -> str | None:
    """The page number a line gives: the line itself, or the number after its leader."""
    text = text.strip()
    if PAGE_NUMBER.match(text):
        return text.split()[-1]
    leader = _LEADER_END.search(text)
    return leader.group(1) if leader else None


def move_contents_to_furniture(document: Any) -> None:
    """Mark every table-of-contents item of a docling document as furniture, in place: dot-leader
    paragraphs, and the paragraphs after a contents heading that repeat later headings."""
    from docling_core.types.doc import CodeItem, ContentLayer, DocItemLabel, TextItem

    for item in document.texts:
        if isinstance(item, TextItem) and not isinstance(item, CodeItem) and is_contents_line(item.text):
            item.content_layer = ContentLayer.FURNITURE
    body = [x for x in document.texts if isinstance(x, TextItem) and x.content_layer != ContentLayer.FURNITURE]
    headings = [i for i, x in enumerate(body) if x.label in (DocItemLabel.SECTION_HEADER, DocItemLabel.TITLE)]
    for at in headings:
        if not contents_heading(body[at].text):
            continue
        later = {normalized(_unnumbered(body[i].text)) for i in headings if i > at} - {""}
        for item in body[at + 1 :]:
            heading = item.label in (DocItemLabel.SECTION_HEADER, DocItemLabel.TITLE)
            if heading or isinstance(item, CodeItem) or not _of_headings(item.text, later):
                break
            item.content_layer = ContentLayer.FURNITURE


_NUMBERING = re.compile(r"^\s*(chapter\s+)?([0-9]+|[a-z]|[ivxlc]+)?([.][0-9]+)*[.]?\s+", re.IGNORECASE)
_PAGE_NUMBERS = re.compile(r"\d+")


def _unnumbered(text: str) -> str:
    return _NUMBERING.sub("", text)


def _of_headings(text: str, headings: set[str]) -> bool:
    """``text`` is mostly the texts of ``headings`` (numbers and page numbers aside)."""
    words = normalized(_PAGE_NUMBERS.sub(" ", text))
    if not words or not headings:
        return False
    padded, covered = f" {words} ", bytearray(len(words) + 2)
    for heading in headings:
        start = padded.find(f" {heading} ")
        while start >= 0:
            covered[start + 1 : start + 1 + len(heading)] = b"\x01" * len(heading)
            start = padded.find(f" {heading} ", start + 1)
    return sum(covered) >= HEADINGS_SHARE * len(words)
