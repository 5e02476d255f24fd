"""Headings a reader sees as one line, joined into one item (docs/ingester.md, "Titles").

docling reads a slide's title set in two runs ("python 7zip library:" and "py7zr", in an ODP
or PPTX text box) as an inline group of two title items: two headings, neither the slide's.
They become one item holding the whole line, its boxes those of all the pieces.
"""

from __future__ import annotations

from typing import Any


def join_split_headings(document: Any) -> None:
    """Join, in place, each inline group of two or more title or section-header items (all of
    one label) into its first item."""
    from docling_core.types.doc import DocItemLabel, GroupLabel

    pieces_to_drop = []
    for group in document.groups:
        if group.label != GroupLabel.INLINE or len(group.children) < 2:
            continue
        pieces = [child.resolve(document) for child in group.children]
        labels = {getattr(piece, "label", None) for piece in pieces}
        if len(labels) != 1 or labels.pop() not in (DocItemLabel.TITLE, DocItemLabel.SECTION_HEADER):
            continue
        first = pieces[0]
        first.text = " ".join(" ".join(piece.text.split()) for piece in pieces).strip()
        first.orig = first.text
        first.prov = [prov for piece in pieces for prov in piece.prov]
        pieces_to_drop += pieces[1:]
    if pieces_to_drop:
        document.delete_items(node_items=pieces_to_drop)
