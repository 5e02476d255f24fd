"""Context expansion as a pure function (docs/client.md, "Context expansion").

A hit grows within the section, table or picture that holds it when its
document's items are stored (``haiku.core.store.enclosing``), otherwise with
its neighbouring chunks; either way up to ``max_chars``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from haiku.core.models import Chunk, DocumentItem, SearchResult
from haiku.core.store.enclosing import SEPARATOR, enclosing_unit


@dataclass
class _Span:
    lo: int
    hi: int
    members: list[int]  # indices into the input results
    lead: str | None = None  # the section's heading (or caption), when no chunk holds it


def _grow(
    chunks: Sequence[Chunk], position: int, max_chars: int, bounds: tuple[int, int] | None = None, spent: int = 0
) -> tuple[int, int]:
    """Add neighbours within ``bounds``, the following one first, while the text (and the
    ``spent`` characters of a lead) stays within ``max_chars``."""
    first, last = bounds if bounds is not None else (0, len(chunks) - 1)
    lo = hi = position
    total = len(chunks[position].content) + spent
    while True:
        grew = False
        for candidate in (hi + 1, lo - 1):
            if first <= candidate <= last:
                cost = len(chunks[candidate].content) + len(SEPARATOR)
                if total + cost <= max_chars:
                    total += cost
                    lo, hi = min(lo, candidate), max(hi, candidate)
                    grew = True
        if not grew:
            return lo, hi


def _span(
    chunks: Sequence[Chunk], position: int, items: Sequence[DocumentItem], max_chars: int, index: int
) -> _Span:
    """The hit grown within its section, table or picture, if the items place it; else with neighbours."""
    unit = enclosing_unit(chunks, position, items) if items else None
    if unit is None:
        lo, hi = _grow(chunks, position, max_chars)
        return _Span(lo, hi, [index])
    lead = unit.lead
    spent = len(lead) + len(SEPARATOR) if lead else 0
    if len(chunks[position].content) + spent > max_chars:
        lead, spent = None, 0
    lo, hi = _grow(chunks, position, max_chars, (unit.lo, unit.hi), spent)
    return _Span(lo, hi, [index], lead)


def expand_results(
    results: Sequence[SearchResult],
    chunks_by_document: Mapping[str, Sequence[Chunk]],
    max_chars: int,
    items_by_document: Mapping[str, Sequence[DocumentItem]] | None = None,
) -> list[SearchResult]:
    """Expand, merge overlaps within a document, and order by score (ties in input order).

    ``items_by_document``: the stored items of the documents that have them;
    their hits grow within their section, table or picture (never past it).
    """
    items_of = items_by_document or {}
    expanded: list[tuple[float, int, SearchResult]] = []
    spans_by_document: dict[str, list[_Span]] = {}
    for index, result in enumerate(results):
        chunks = chunks_by_document.get(result.document_id or "") or []
        position = next((i for i, c in enumerate(chunks) if c.id == result.chunk_id), None)
        if position is None or max_chars <= 0:
            expanded.append((result.score, index, result))
            continue
        items = items_of.get(result.document_id or "") or []
        spans_by_document.setdefault(result.document_id or "", []).append(
            _span(chunks, position, items, max_chars, index)
        )

    for document_id, spans in spans_by_document.items():
        chunks = chunks_by_document[document_id]
        spans.sort(key=lambda s: (s.lo, s.hi))
        merged: list[_Span] = []
        for span in spans:
            if merged and span.lo <= merged[-1].hi:
                last = merged[-1]
                last.hi = max(last.hi, span.hi)
                last.members.extend(span.members)
                if last.lead is None and span.lo == last.lo:
                    last.lead = span.lead
            else:
                merged.append(span)
        for span in merged:
            best = min(span.members, key=lambda i: (-results[i].score, i))
            base = results[best]
            covered = chunks[span.lo : span.hi + 1]
            pages = sorted({p for c in covered for p in c.page_numbers})
            texts = [c.content for c in covered]
            update = {
                "content": SEPARATOR.join([span.lead, *texts] if span.lead else texts),
                "chunk_ids": [c.id for c in covered if c.id],
                "page_numbers": pages,
                "item_refs": list(dict.fromkeys(ref for c in covered for ref in c.item_refs)),
                "boxes": [box for c in covered for box in c.boxes],
            }
            expanded.append((base.score, min(span.members), base.model_copy(update=update)))

    expanded.sort(key=lambda item: (-item[0], item[1]))
    return [result for _, _, result in expanded]
