"""How an answer's citations read on a terminal (docs/cli.md).

A citation's header names its database only when the question spanned
several; ``full`` prints each cited chunk whole instead of an excerpt, and
``context`` adds the passage around it that the model read.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from haiku.core.models import Citation

EXCERPT_CHARS = 300


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= EXCERPT_CHARS else flat[: EXCERPT_CHARS - 1].rstrip() + "…"


def pages_line(page_numbers: Sequence[int]) -> str | None:
    """``page: 3`` or ``pages: 3, 4`` (PDFs), as search results and citations show them; None without pages."""
    pages = sorted(set(page_numbers))
    if not pages:
        return None
    return ("page: " if len(pages) == 1 else "pages: ") + ", ".join(str(p) for p in pages)


def citation_header(citation: Citation, *, label: bool) -> str:
    title = citation.document_title or citation.document_uri or citation.document_id
    where = f"{citation.source}: " if label and citation.source is not None else ""
    return f"[{citation.index}] {where}{title}"


def format_citations(
    citations: Sequence[Citation], *, label: bool, full: bool = False, context: bool = False
) -> str:
    if not citations:
        return "Citations: none"
    lines = ["Citations:"]
    for citation in citations:
        lines.append(citation_header(citation, label=label))
        if citation.document_uri and citation.document_uri != citation.document_title:
            lines.append(f"    {citation.document_uri}")
        if citation.headings:
            lines.append("    section: " + " > ".join(citation.headings))
        pages = pages_line(citation.page_numbers)
        if pages is not None:
            lines.append(f"    {pages}")
        lines.append(f"    chunk: {citation.chunk_id}")
        body = citation.content.strip() if full else _excerpt(citation.content)
        lines.append(textwrap.indent(body, "    "))
        if context and citation.context:
            lines.append("    context:")
            lines.append(textwrap.indent(citation.context.strip(), "        "))
    return "\n".join(lines)


def grounding_line(note: str | None) -> str | None:
    """The line saying an answer is ungrounded, and why; None for a cited answer."""
    return None if note is None else f"Not grounded: {note}."
