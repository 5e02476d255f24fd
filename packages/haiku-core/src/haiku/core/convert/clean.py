"""Chunk text is clean text (docs/ingester.md, "Chunks").

Control characters (BEL, vertical tabs, C1 codes; a form feed becomes a line
break, and a C1 code that is a cp1252 character mis-decoded, such as \\x96 for
an en dash, becomes that character) and the glyph
placeholders a PDF's text layer yields for unmapped glyphs (``GLYPH<…>``,
``/uni…``-style names docling-parse cannot map) are removed before chunking and
embedding; a tab inside prose becomes a space. Code keeps its tabs. Arabic and Hebrew
presentation forms (the joined glyph shapes some PDFs map their text to: ``ﻣﺮﺣﺒﺎ``)
become the letters they show (``مرحبا``), so a query typed with a keyboard finds them.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def _c1_as_cp1252() -> dict[int, str]:
    """C1 codes that are cp1252 text decoded as Latin-1 (\\x96 for "–"): read as cp1252."""
    table = {}
    for code in range(0x80, 0xA0):
        try:
            table[code] = bytes([code]).decode("cp1252")
        except UnicodeDecodeError:
            continue
    return table


_C1 = _c1_as_cp1252()
_GLYPH = re.compile(r"GLYPH<[^>]{0,64}>|/uni[0-9A-Fa-f]{4,6}\b")
_TABS = re.compile(r"[ \t]*\t[ \t]*")
_PRESENTATION_FORMS = re.compile(r"[\ufb1d-\ufb4f\ufb50-\ufdff\ufe70-\ufefc]+")


def _letters(match: re.Match[str]) -> str:
    return unicodedata.normalize("NFKC", match.group())


def clean_text(text: str, *, keep_tabs: bool = False) -> str:
    """``text`` without control characters or glyph artefacts; tabs as spaces unless ``keep_tabs``."""
    text = text.replace("\f", "\n").replace("\r\n", "\n").translate(_C1)
    text = _PRESENTATION_FORMS.sub(_letters, _GLYPH.sub("", _CONTROL.sub("", text)))
    return text if keep_tabs else _TABS.sub(" ", text)


def clean_document(document: Any) -> None:
    """Clean every text item and table cell of a docling document in place."""
    from docling_core.types.doc import CodeItem, TableItem

    for item in document.texts:
        keep_tabs = isinstance(item, CodeItem)
        item.text = clean_text(item.text, keep_tabs=keep_tabs)
        if item.orig:
            item.orig = clean_text(item.orig, keep_tabs=keep_tabs)
    for table in document.tables:
        if isinstance(table, TableItem):
            for cell in table.data.table_cells:
                cell.text = clean_text(cell.text)
