"""Context expansion as a pure function (docs/client.md, "Context expansion")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from haiku.core.models import Chunk, SearchResult

SEPARATOR = "\n\n"


@dataclass
class _Span:
    lo: int
    hi: int
    members: list[int]  # indices into the input results


def _grow(chunks: Sequence[Chunk], position: int, max_chars: int) -> tuple[int, int]:
    """Add neighbours, the following one first, while the text stays within ``max_chars``."""
    lo = hi = position
    total = len(chunks[position].content)
    while True:
        grew = False
        for candidate in (hi + 1, lo - 1):
            if 0 <= candidate < len(chunks):
                cost = len(chunks[candidate].content) + len(SEPARATOR)
                if total + cost <= max_chars:
                    total += cost
                    lo, hi = min(lo, candidate), max(hi, candidate)
                    grew = True
        if not grew:
            return lo, hi


def expand_results(
    results: Sequence[SearchResult], chunks_by_document: Mapping[str, Sequence[Chunk]], max_chars: int
) -> list[SearchResult]:
    """Expand, merge overlaps within a document, and order by score (ties in input order)."""
    expanded: list[tuple[float, int, SearchResult]] = []
    spans_by_document: dict[str, list[_Span]] = {}
    for index, result in enumerate(results):
        chunks = chunks_by_document.get(result.document_id or "") or []
        position = next((i for i, c in enumerate(chunks) if c.id == result.chunk_id), None)
        if position is None or max_chars <= 0:
            expanded.append((result.score, index, result))
            continue
        lo, hi = _grow(chunks, position, max_chars)
        spans_by_document.setdefault(result.document_id or "", []).append(_Span(lo, hi, [index]))

    for document_id, spans in spans_by_document.items():
        chunks = chunks_by_document[document_id]
        spans.sort(key=lambda s: (s.lo, s.hi))
        merged: list[_Span] = []
        for span in spans:
            if merged and span.lo <= merged[-1].hi:
                last = merged[-1]
                last.hi = max(last.hi, span.hi)
                last.members.extend(span.members)
            else:
                merged.append(span)
        for span in merged:
            best = min(span.members, key=lambda i: (-results[i].score, i))
            base = results[best]
            covered = chunks[span.lo : span.hi + 1]
            pages = sorted({p for c in covered for p in c.page_numbers})
            update = {
                "content": SEPARATOR.join(c.content for c in covered),
                "chunk_ids": [c.id for c in covered if c.id],
                "page_numbers": pages,
            }
            expanded.append((base.score, min(span.members), base.model_copy(update=update)))

    expanded.sort(key=lambda item: (-item[0], item[1]))
    return [result for _, _, result in expanded]
