"""Items that stay in a document but out of its chunks (docs/ingester.md, "Formats"): a table of
contents' dot-leader lines (``2.1. NAME . . . . . . 2``).

They are kept as furniture, as running headers and footers are, so ``visualize``
still draws them on their page, while the markdown and the chunks, and so the
index, hold the text they point to rather than pages of dots.
"""

from __future__ import annotations

import re
from typing import Any

# Six or more dots or middle dots, spaced or not: a leader, never an ellipsis.
_LEADER = re.compile(r"(?:\s?[.·]){6,}\s*|…{2,}\s*")
_PAGE = re.compile(r"(?:\d{1,4}|[ivxlcdm]{1,7})(?:\s|$)", re.IGNORECASE)


def is_contents_line(text: str) -> bool:
    """Whether ``text`` is one or more table-of-contents entries: titles each followed by a dot leader
    and a page number (arabic or roman), and nothing else."""
    parts = _LEADER.split(text.strip())
    if len(parts) < 2 or not _PAGE.fullmatch(parts[-1].strip() + " "):
        return False  # no leader, or words after the last page number: prose
    return all(_PAGE.match(part) for part in parts[1:])


def move_contents_to_furniture(document: Any) -> None:
    """Mark every table-of-contents item of a docling document as furniture, in place."""
    from docling_core.types.doc import CodeItem, ContentLayer, TextItem

    for item in document.texts:
        if isinstance(item, TextItem) and not isinstance(item, CodeItem) and is_contents_line(item.text):
            item.content_layer = ContentLayer.FURNITURE
