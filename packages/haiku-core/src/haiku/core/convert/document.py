"""What the converter returns: a document's title, markdown and chunks (docs/ingester.md).

Plain data, importable without docling: the ingester's daemon, ``rebuild`` and
any client read these while only a conversion worker runs docling.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from haiku.core.models import Box, DocumentStructure


@dataclass
class ConvertedChunk:
    content: str
    embed_text: str
    headings: list[str] = field(default_factory=list)
    page_numbers: list[int] = field(default_factory=list)
    item_refs: list[str] = field(default_factory=list)  # the document items it was cut from
    boxes: list[Box] = field(default_factory=list)  # where they lie, page points, top-left origin


@dataclass
class ConvertedDocument:
    title: str
    content: str
    chunks: list[ConvertedChunk]
    language: str | None = None  # code and data files: their language (docs/ingester.md, "Formats")
    # Items, pictures and page images (docs/ingester.md, "Structure, pictures and page images");
    # None for plain text, code and data files, which have no structure beyond their text.
    structure: DocumentStructure | None = None
    metadata: dict[str, Any] = field(default_factory=dict)  # what the document metadata should say of it


@dataclass
class ReadDocument:
    """A file read by the converter, before chunking: docling's document and its markdown.

    ``format_title``: a title the text suggests (a plain-text or PDF title
    line), used when the document has no heading; ``declared_title``: the title
    the file declares of itself (docs/ingester.md, "Titles"), used first.
    """

    name: str
    docling: Any
    content: str
    format_title: str | None = None
    language: str | None = None
    plain_text: bool = False
    structured: bool = True  # False for plain text, code and data files: no structure beyond the text
    # Source code: each block's enclosing classes and functions, by the block's item (``code_scopes``).
    code_scopes: dict[str, list[str]] | None = None
    declared_title: str | None = None
    # What the document metadata should say of the file (a scan's unreadable pages).
    metadata: dict[str, Any] = field(default_factory=dict)


def embed_text(headings: list[str], content: str) -> str:
    """What the encoder sees for a chunk: its headings, then its text (as docling contextualizes).

    ``rebuild`` re-embeds stored chunks with the same function, so a rebuilt
    vector equals a freshly ingested one.
    """
    return "\n".join([*headings, content])


def decode_text(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252")
