"""The title rule (docs/ingester.md, "Titles").

A document's title is the one the file declares of itself (``declared_titles``:
a web page's ``<h1>`` or ``<title>``, document properties, a PDF's ``/Title``,
LaTeX's ``\\title``); else its first heading at the top level in use on its first
pages (a PDF's title page sets its title above every other heading: ``layout_headings``),
never a list item, a cover's word, an issue or page number; else, for plain text and PDFs
(whose text layer may have no heading the layout step finds), a first paragraph
that reads as a title (``title_line``); else the file name, as text: a name whose bytes are not UTF-8
(``caf\\xe9.md``) reads with U+FFFD in their place (``readable_name``), since a
title is stored as UTF-8 text.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from haiku.core.convert.furniture import contents_heading

TITLE_MAX_CHARS = 100
TITLE_PAGES = 3  # a PDF's title is set on one of its first pages
_NOT_A_TITLE = re.compile(
    r"(?i)^(untitled|no title|(?:document |presentation |slide )?title|document\d*|presentation\d*"
    r"|powerpoint presentation|slide \d+|book\d*|sheet\d*|click to (?:add|edit) (?:a )?title)$"
    r"|\.(docx?|pdf|odt|odp|ods|rtf|tex|dvi|txt|pptx?|xlsx?|html?|epub)$|^microsoft "
)

# A cover's word, an issue or page number: set large on a first page, never a document's title
_NOT_A_TITLE_LINE = re.compile(
    r"(?i)^(?:(?:(?:inside\s+)?(?:front|back)\s+)?cover(?:\s+page)?"
    r"|(?:no\.?|nr\.?|issue|vol\.?|volume|number|page|#)\s*\d+(?:\s*(?:/|of)\s*\d+)?"
    r"|제\s*\d+\s*[호권]|第\s*\d+\s*[号號期卷])$"
)


def cover_word(text: str) -> bool:
    """``Front cover``, ``Issue 12``, ``제1695호``, ``Page 3``: large print that titles nothing."""
    return bool(_NOT_A_TITLE_LINE.match(" ".join(text.split())))


def readable_name(name: str) -> str:
    """A file name as text: bytes that are not UTF-8 (held by Python as lone surrogates) become U+FFFD."""
    return os.fsencode(name).decode("utf-8", "replace")


def choose_title(document: Any, name: str, fallback: str | None, declared: str | None = None) -> str:
    """``declared``: the title the file declares of itself (``declared_titles``), first;
    ``fallback``: a title the text suggests (a plain-text title line), when the document has no heading."""
    return declared or first_heading(document) or plausible_title(fallback) or Path(name).name


def title_line(text: str) -> str | None:
    """The first paragraph as a title, when it is one short line that does not end a sentence.

    ``Kestrel notes`` above a blank line is a title; ``Kestrels hover.`` is a
    sentence, and a paragraph of several lines is body text.
    """
    for paragraph in text.replace("\r\n", "\n").split("\n\n"):
        lines = paragraph.strip().splitlines()
        if not lines:
            continue
        first = lines[0].strip().lstrip("#").strip()
        if len(lines) == 1 and 0 < len(first) <= TITLE_MAX_CHARS and not first.endswith((".", ",", ";", ":")):
            return first
        return None
    return None


def pdf_title(data: bytes) -> str | None:
    """The title a PDF's metadata records, unless it is a placeholder, a file name or a cover's word."""
    try:
        import pypdfium2

        pdf = pypdfium2.PdfDocument(data)
        try:
            title = (pdf.get_metadata_dict().get("Title") or "").strip()
        finally:
            pdf.close()
    except Exception:  # a PDF docling read but pdfium cannot: no title from it
        return None
    return plausible_title(title)


# The headings of a document's apparatus but its contents (``furniture.contents_heading``),
# which title no document: "Abstract", "References"
_APPARATUS = re.compile(r"(?i)^(?:abstract|references|bibliography|index|acknowledge?ments?)$")


def plausible_title(text: str | None) -> str | None:
    """``text`` as a title unless it is no title (``usable_title``), a list item, a cover's word or
    the heading of a document's apparatus (a slide deck's "Contents" slide before its first section)."""
    title = usable_title(text)
    if title is None or cover_word(title) or title.startswith(("•", "◦", "▪", "‣", "·", "- ", "* ")):
        return None
    if _APPARATUS.match(title) or contents_heading(title) or contents_heading("".join(title.split())):  # "차 례"
        return None
    return title


# the mark of a title's footnote (LaTeX's \thanks): "A Lego System for Conditional Inference ∗"
_FOOTNOTE_MARK = re.compile(r"(?:\s*[∗†‡§¹²³⁴⁵⁶⁷⁸⁹⁰]+|\s+\*+)$")
_LETTER_MARK = re.compile(r"[^\W\d_][a-z]\)$")


def usable_title(title: str | None) -> str | None:
    """``title`` stripped, unless it is empty, over twice ``TITLE_MAX_CHARS``, wordless (a lone
    ``1``, a bullet) or a placeholder or file name (``Untitled``, ``report.docx``)."""
    title = _FOOTNOTE_MARK.sub("", " ".join((title or "").split()))
    if _LETTER_MARK.search(title) and title.count("(") < title.count(")"):
        title = title[:-2]  # a physics journal's mark, "a)", closes no bracket: "… Linebreak" + "a)"
    if not title or len(title) > 2 * TITLE_MAX_CHARS or _NOT_A_TITLE.search(title):
        return None
    if not any(c.isalpha() for c in title):
        return None
    return title


def first_heading(document: Any) -> str | None:
    """The document's first title, else its first section heading; of a paged document, the first
    at the top level in use on its first pages. A heading that is no
    title (``plausible_title``: a bullet, "Front cover") is passed over."""
    from docling_core.types.doc import DocItemLabel

    headings: list[tuple[int, str, int]] = []  # (page, text, level)
    for item, _level in document.iterate_items():
        label = getattr(item, "label", None)
        if label not in (DocItemLabel.TITLE, DocItemLabel.SECTION_HEADER):
            continue
        text = plausible_title(getattr(item, "text", None))
        if text and label == DocItemLabel.TITLE:
            return text
        if text:
            prov = getattr(item, "prov", None) or []
            headings.append((prov[0].page_no if prov else 0, text, int(getattr(item, "level", 1) or 1)))
    if not headings or headings[0][0] == 0:  # no pages (a web page, a text file): its first heading
        return headings[0][1] if headings else None
    first_pages = [h for h in headings if h[0] < headings[0][0] + TITLE_PAGES]
    top = min(level for _, _, level in first_pages)
    return next(text for _, text, level in first_pages if level == top)

