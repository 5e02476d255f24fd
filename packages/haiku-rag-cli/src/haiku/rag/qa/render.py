"""How an answer's citations read on a terminal (docs/cli.md).

A citation's header names its database only when the question spanned
several; ``full`` prints each cited chunk whole instead of an excerpt.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from haiku.core.models import Citation

EXCERPT_CHARS = 300


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= EXCERPT_CHARS else flat[: EXCERPT_CHARS - 1].rstrip() + "…"


def citation_header(citation: Citation, *, label: bool) -> str:
    title = citation.document_title or citation.document_uri or citation.document_id
    where = f"{citation.source}: " if label and citation.source is not None else ""
    return f"[{citation.index}] {where}{title}"


def format_citations(citations: Sequence[Citation], *, label: bool, full: bool = False) -> str:
    if not citations:
        return "Citations: none"
    lines = ["Citations:"]
    for citation in citations:
        lines.append(citation_header(citation, label=label))
        if citation.document_uri and citation.document_uri != citation.document_title:
            lines.append(f"    {citation.document_uri}")
        if citation.headings:
            lines.append("    section: " + " > ".join(citation.headings))
        lines.append(f"    chunk: {citation.chunk_id}")
        body = citation.content.strip() if full else _excerpt(citation.content)
        lines.append(textwrap.indent(body, "    "))
    return "\n".join(lines)
