"""The state of a conversation with the RAG capability.

``sources`` (the per-question selection) travels beside the filters it scopes
with; the selection, the filters and the citation index all persist across
the questions of one conversation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from haiku.core.models import Citation
from haiku.rag.capability.selection import DocumentFilter


@dataclass
class RAGState:
    sources: list[str] | None = None
    """Databases this question reads; None for every covered one, [] for none."""
    document_filter: DocumentFilter | None = None
    """Documents this question reads, as (database, id) pairs (chat's /filter)."""
    filter: str | None = None
    """A SQL WHERE over document fields (``ask(filter=…)``, ``--filter``)."""
    citations: list[Citation] = field(default_factory=list)
    """Every citation of the conversation, in first-cited order; ``index`` from 1."""
    messages: list[dict[str, Any]] = field(default_factory=list)
    """The conversation with the model so far, without the system message."""

    def cited_from(self, chunk_id: str) -> list[str | None]:
        """The databases ``chunk_id`` was cited from earlier in the conversation."""
        return list(dict.fromkeys(c.source for c in self.citations if c.chunk_id == chunk_id))

    def find(self, source: str | None, chunk_id: str) -> Citation | None:
        return next((c for c in self.citations if c.source == source and c.chunk_id == chunk_id), None)
