"""Spreadsheets as a reader sees them (docs/ingester.md, "Tables").

docling reads each sheet of an XLSX or ODS workbook into a group named for the
sheet, and each note written on a cell into a comment outside the body. Here:

- notes written around a sheet's table are text, not rows of it (``sheet_notes``);
- each sheet's name becomes the heading of what it holds, so a chunk says which
  sheet its rows come from ("Targets"), except an empty sheet and the one sheet
  of a workbook that kept its default name ("Sheet1");
- a date cell reads as the date it shows ("2024-01-10"), not as a timestamp at
  midnight ("2024-01-10 00:00:00");
- a cell's comment is kept: docling keeps an XLSX note outside the body, aimed
  at its table; an ODS comment, which docling drops, is read here the same way;
  ``table_comments`` gives each table's comments by the cell they were written
  on, for the table's text (``table_text``).
"""

from __future__ import annotations

import re
from typing import Any

SPREADSHEETS = ("xlsx", "ods")
_DEFAULT_SHEET = re.compile(r"(?i)^(sheet|feuil|tabelle|hoja|foglio|planilha|blad|arkusz)\s*\d*$")
_MIDNIGHT = re.compile(r"^(\d{4}-\d\d-\d\d)[ T]00:00:00$")
_CELL_NAME = re.compile(r"-([A-Z]{1,3})([0-9]+)$")  # docling names a note's group "comment-<sheet>-D4"
_NOTE_DETAILS = re.compile(r"^\[([^\]]*)\]:\s*", re.DOTALL)  # "[author: Ana, time: …]: text"


def sheet_groups(document: Any) -> list[tuple[Any, str]]:
    """The workbook's sheets in order: (group, sheet name)."""
    from docling_core.types.doc import GroupLabel

    sheets = []
    for ref in document.body.children:
        group = ref.resolve(document)
        label, name = getattr(group, "label", None), str(getattr(group, "name", "") or "")
        if label == GroupLabel.SHEET:
            sheets.append((group, name))
        elif label == GroupLabel.SECTION and name.startswith("sheet: "):  # docling's ODS backend
            sheets.append((group, name.removeprefix("sheet: ")))
    return sheets


def read_sheets(document: Any, fmt: str, data: bytes) -> None:
    """Head each sheet with its name, show its dates as dates and (ODS) keep its cells'
    comments, in place."""
    from haiku.core.convert.sheet_notes import notes_out_of_tables

    sheets = sheet_groups(document)
    for group, _name in sheets:
        notes_out_of_tables(document, group)
    if fmt == "ods":
        for group, name in sheets:
            for (row, col), note in _ods_notes(data).get(name, {}).items():
                _add_note(document, group, name, row, col, note)
    for group, name in sheets:
        name = " ".join(name.split())
        if not name or not group.children or (len(sheets) == 1 and _DEFAULT_SHEET.match(name)):
            continue
        document.add_heading(text=name, level=1, parent=group, content_layer=group.content_layer)
        group.children.insert(0, group.children.pop())  # before what the sheet holds
    for table in document.tables:
        for cell in table.data.table_cells:
            if match := _MIDNIGHT.match(cell.text):
                cell.text = match.group(1)


def _ods_notes(data: bytes) -> dict[str, dict[tuple[int, int], str]]:
    """The comments (``office:annotation``) of an ODS file, by sheet and (row, column): docling's
    ODS backend reads a cell's value and drops its comment."""
    import io

    from odfdo import Document

    notes: dict[str, dict[tuple[int, int], str]] = {}
    for sheet in Document(io.BytesIO(data)).body.tables:
        if not sheet.get_elements("descendant::office:annotation"):
            continue  # walking a sheet cell by cell is slow: only a sheet with comments
        for r, row in enumerate(sheet.traverse()):
            for c, cell in enumerate(row.traverse()):
                for annotation in cell.get_elements("office:annotation"):
                    creators = [e.text for e in annotation.get_elements("dc:creator") if e.text]
                    text = " ".join(str(annotation.text_content or "").split())
                    if text:
                        prefix = f"[author: {creators[0]}]: " if creators else ""
                        notes.setdefault(sheet.name, {})[(r, c)] = prefix + text
    return notes


def _add_note(document: Any, group: Any, sheet: str, row: int, col: int, note: str) -> None:
    """A comment on the table of ``group`` that holds the cell, as docling's XLSX backend
    writes one (a group outside the body named for the cell, its text aimed at the table)."""
    from docling_core.types.doc import ContentLayer, GroupLabel, TableItem

    for ref in group.children:
        table = ref.resolve(document)
        origin = _table_origin(table) if isinstance(table, TableItem) else None
        if origin is None:
            continue
        if 0 <= row - origin[0] < table.data.num_rows and 0 <= col - origin[1] < table.data.num_cols:
            name = f"comment-{sheet}-{_column_letters(col)}{row + 1}"
            notes = document.add_group(label=GroupLabel.COMMENT_SECTION, name=name, content_layer=ContentLayer.NOTES)
            document.add_comment(text=note, targets=[table], parent=notes)
            return


def table_comments(table: Any, document: Any) -> tuple[dict[tuple[int, int], str], list[str]]:
    """The table's comments: those whose cell is known, by the (row, column) of that cell in the
    table, and the others, in order."""
    by_cell: dict[tuple[int, int], str] = {}
    rest: list[str] = []
    origin = _table_origin(table)
    for ref in getattr(table, "comments", None) or []:
        node = ref.resolve(document)
        group = node.parent.resolve(document) if node.parent is not None else None
        texts = [node] if hasattr(node, "text") else [c.resolve(document) for c in getattr(node, "children", [])]
        note = "; ".join(t for t in (_note(str(getattr(n, "text", "") or "")) for n in texts) if t)
        if not note:
            continue
        where = _CELL_NAME.search(str(getattr(group if hasattr(node, "text") else node, "name", "") or ""))
        cell = None
        if where and origin is not None:
            row = int(where.group(2)) - 1 - origin[0]
            col = _column_index(where.group(1)) - origin[1]
            if 0 <= row < table.data.num_rows and 0 <= col < table.data.num_cols:
                cell = (row, col)
        if cell is None:
            rest.append(note)
        else:
            by_cell[cell] = f"{by_cell[cell]}; {note}" if cell in by_cell else note
    return by_cell, rest


def _note(text: str) -> str:
    """``[author: Ana, time: …]: Recount pending`` -> ``comment by Ana: Recount pending``."""
    text = " ".join(text.split())
    details = _NOTE_DETAILS.match(text)
    if not details:
        return f"comment: {text}" if text else ""
    body = text[details.end() :]
    author = re.search(r"author:\s*([^,]+)", details.group(1))
    who = f" by {author.group(1).strip()}" if author else ""
    return f"comment{who}: {body}" if body else ""


def _table_origin(table: Any) -> tuple[int, int] | None:
    """The sheet row and column of the table's top-left cell: docling's spreadsheet
    backends box a table by the cells it covers."""
    for prov in getattr(table, "prov", None) or []:
        return int(prov.bbox.t), int(prov.bbox.l)
    return None


def _column_index(letters: str) -> int:
    index = 0
    for letter in letters:
        index = index * 26 + ord(letter) - ord("A") + 1
    return index - 1


def _column_letters(index: int) -> str:
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("A") + rest) + letters
    return letters
