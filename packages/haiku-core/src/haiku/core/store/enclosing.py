"""Where a hit sits in its document's structure: the section, table or picture that holds it
(docs/client.md#context-expansion).

Plain functions over a document's stored items (``DocumentItem``, in document
order) and its chunks (each with the refs of the items it was cut from). A
document stored without structure has no items, and nothing here applies.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from haiku.core.models import Chunk, DocumentItem

SEPARATOR = "\n\n"  # between the parts of an expanded text
HEADINGS = frozenset({"title", "section_header"})
# Items that hold their own parts (a table's cells and caption, a picture's caption):
# a hit inside one grows to the whole of it. Code is not one: inline code sits inside
# a paragraph, and a code block belongs to its section like any paragraph.
WHOLES = frozenset({"table", "picture", "chart"})


@dataclass(frozen=True)
class Unit:
    """The chunks ``lo``..``hi`` holding a hit's section (or table, or picture), and the text
    that places them that no chunk holds (the section's heading; a table's or picture's
    caption after it), if any."""

    lo: int
    hi: int
    lead: str | None = None


def _whole_of(item: DocumentItem, by_ref: Mapping[str, DocumentItem]) -> DocumentItem | None:
    """The table or picture ``item`` is (or lies in: a caption, a cell), if any."""
    seen: set[str] = set()
    current: DocumentItem | None = item
    while current is not None and current.self_ref not in seen:
        if current.label in WHOLES:
            return current
        seen.add(current.self_ref)
        current = by_ref.get(current.parent_ref or "")
    return None


def _section(items: Sequence[DocumentItem], anchor: int) -> tuple[int, int]:
    """The items of the section holding ``items[anchor]``: from its heading (or the start)
    to the item before the next heading (or the end)."""
    start = anchor
    while start > 0 and items[start].label not in HEADINGS:
        start -= 1
    end = anchor + 1
    while end < len(items) and items[end].label not in HEADINGS:
        end += 1
    return start, end


def _descendants(whole: DocumentItem, items: Sequence[DocumentItem]) -> set[str]:
    """The refs of ``whole`` and of every item whose parents lead to it."""
    refs = {whole.self_ref}
    grew = True
    while grew:
        grew = False
        for item in items:
            if item.parent_ref in refs and item.self_ref not in refs:
                refs.add(item.self_ref)
                grew = True
    return refs


def enclosing_unit(chunks: Sequence[Chunk], position: int, items: Sequence[DocumentItem]) -> Unit | None:
    """The section, table or picture holding ``chunks[position]``; None when the stored items
    do not place the chunk (no structure, or refs that name no stored item)."""
    index = {item.self_ref: i for i, item in enumerate(items)}
    placed = [index[ref] for ref in chunks[position].item_refs if ref in index]
    if not placed:
        return None
    by_ref = {item.self_ref: item for item in items}
    body = [i for i in placed if items[i].label not in HEADINGS] or placed
    whole = next((w for w in (_whole_of(items[i], by_ref) for i in body) if w is not None), None)
    start, end = _section(items, index[whole.self_ref] if whole is not None else min(body))
    heading = items[start].text if items[start].label in HEADINGS else None
    if whole is not None:
        refs = _descendants(whole, items)
        leads = [heading, whole.caption]
    else:
        refs = {item.self_ref for item in items[start:end]}
        leads = [heading]
    holding = [i for i, chunk in enumerate(chunks) if refs.intersection(chunk.item_refs)]
    lo, hi = min([position, *holding]), max([position, *holding])
    unheld = [
        lead.strip()
        for lead in leads
        if lead and lead.strip() and not any(_holds_line(chunk.content, lead) for chunk in chunks[lo : hi + 1])
    ]
    return Unit(lo, hi, SEPARATOR.join(unheld) or None)


def _holds_line(text: str, line: str) -> bool:
    """Whether ``text`` has ``line`` as one of its lines (a markdown heading's ``#`` aside)."""
    wanted = line.strip()
    return any(row.strip().lstrip("#").strip() == wanted for row in text.splitlines())
