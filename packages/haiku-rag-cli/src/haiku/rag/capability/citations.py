"""Placing cited chunk ids in the database they came from (docs/qa.md).

A chunk id is unique within one database only, so a citation is placed by
what this question's searches returned: an id one result carries is cited
from that result's database. An id no search returned is looked up in the
question's selected databases and nowhere else. Whenever an id could name
chunks in two databases the citation is refused rather than guessed.

A citation carries the cited chunk's own text, pages, boxes and section; the passage
the model read around it (the chunk expanded with its neighbours) is kept
apart, as its ``context``.
"""

from __future__ import annotations

import asyncio
import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from haiku.core.errors import AmbiguousCitationError, UnknownDatabaseError
from haiku.core.models import Chunk, Citation, Document, SearchResult
from haiku.rag.capability.state import RAGState

if TYPE_CHECKING:
    from haiku.rag.client import HaikuRAG

SNAP_SIMILARITY = 0.75
_DECORATION = re.compile(r"^(?:chunk[ _-]?id\s*[:=]\s*)", re.IGNORECASE)


def normalize_id(raw: object) -> str:
    """What a model wraps around an id it copies: quotes, brackets, a `Chunk ID:` label."""
    text = str(raw).strip().strip("`'\"[]()<> ")
    return _DECORATION.sub("", text).strip().strip("`'\"[]()<> ")


@dataclass
class Retrieved:
    """What this question's searches showed, by chunk id and then by database, and the
    chunks they found, by database and chunk id."""

    by_id: dict[str, dict[str | None, SearchResult]] = field(default_factory=dict)
    found: dict[tuple[str | None, str], SearchResult] = field(default_factory=dict)

    def add(self, results: Sequence[SearchResult], *, hits: Sequence[SearchResult] = ()) -> None:
        """``results`` as the model was shown them; ``hits``, the chunks themselves, before expansion."""
        for hit in hits:
            if hit.chunk_id:
                self.found.setdefault((hit.source, hit.chunk_id), hit)
        for result in results:
            ids = [result.chunk_id, *result.chunk_ids]
            for chunk_id in dict.fromkeys(i for i in ids if i):
                holders = self.by_id.setdefault(chunk_id, {})
                # The result centred on the chunk describes it best; an expansion only covers it.
                if result.source not in holders or result.chunk_id == chunk_id:
                    holders[result.source] = result

    def snap(self, chunk_id: str) -> str | None:
        """The one retrieved id within SNAP_SIMILARITY of ``chunk_id``, if exactly one is."""
        close = [
            known
            for known in self.by_id
            if difflib.SequenceMatcher(None, chunk_id, known).ratio() >= SNAP_SIMILARITY
        ]
        return close[0] if len(close) == 1 else None


@dataclass(frozen=True)
class _Placed:
    chunk_id: str
    source: str | None
    result: SearchResult | None = None
    """The passage shown to the model that holds the chunk."""
    chunk: Chunk | SearchResult | None = None
    """The chunk itself: its text, pages and section."""
    document: Document | None = None


class CitationDesk:
    """Turns the ids a model cites into citations, for one question of a conversation."""

    def __init__(
        self,
        client: HaikuRAG,
        state: RAGState,
        retrieved: Retrieved,
        selection: Sequence[str] | None,
    ) -> None:
        self.client = client
        self.state = state
        self.retrieved = retrieved
        self.selection = None if selection is None else list(selection)
        self.cited: list[Citation] = []
        """This question's citations in first-cited order."""
        self.ungrounded = False

    async def cite(self, raw_ids: Sequence[object]) -> tuple[list[Citation], list[str]]:
        """Cite every id or none: an ambiguous id raises AmbiguousCitationError and records nothing.

        Returns the citations made and the ids that matched nothing (ignored).
        """
        if not raw_ids:
            self.ungrounded = True
            return [], []
        placed: list[_Placed] = []
        ignored: list[str] = []
        for raw in raw_ids:
            chunk_id = normalize_id(raw)
            spot = await self._place(chunk_id) if chunk_id else None
            if spot is None:
                ignored.append(str(raw))
                continue
            earlier = [s for s in self.state.cited_from(spot.chunk_id) if s != spot.source]
            if earlier:
                raise AmbiguousCitationError.already_cited(spot.chunk_id, earlier, spot.source)
            placed.append(spot)
        made = [await self._record(spot) for spot in placed]
        return made, ignored

    async def _place(self, chunk_id: str) -> _Placed | None:
        holders = self.retrieved.by_id.get(chunk_id)
        if holders is None:
            snapped = self.retrieved.snap(chunk_id)
            if snapped is not None:
                chunk_id, holders = snapped, self.retrieved.by_id[snapped]
        if holders:
            if len(holders) > 1:
                raise AmbiguousCitationError.shared(chunk_id, list(holders))
            ((source, result),) = holders.items()
            chunk = self.retrieved.found.get((source, chunk_id)) or await self._chunk_in(source, chunk_id)
            return _Placed(chunk_id, source, result=result, chunk=chunk)
        return await self._fallback(chunk_id)

    async def _chunk_in(self, source: str | None, chunk_id: str) -> Chunk | None:
        """A chunk the model saw only as a neighbour in an expanded passage, from its database."""
        clients = await self.client.clients_covering(None if source is None else [source])
        return await clients[0].get_chunk_by_id(chunk_id) if clients else None

    async def _fallback(self, chunk_id: str) -> _Placed | None:
        """Ask the selected databases, and only those, which of them holds ``chunk_id``."""
        if self.selection is not None and not self.selection:
            return None
        clients = await self.client.clients_covering(self.selection)
        chunks = await asyncio.gather(*(c.get_chunk_by_id(chunk_id) for c in clients))
        found = [(c, chunk) for c, chunk in zip(clients, chunks, strict=True) if chunk is not None]
        if len(found) > 1:
            raise AmbiguousCitationError.shared(chunk_id, [c.source for c, _ in found])
        if not found:
            return None
        holder, chunk = found[0]
        document = await holder.get_document_by_id(chunk.document_id) if chunk.document_id else None
        return _Placed(chunk_id, holder.source, chunk=chunk, document=document)

    def _check_covered(self, source: str | None) -> None:
        covered = self.client.source_names
        if source is not None and source not in covered:
            raise UnknownDatabaseError.on_client([source], covered)

    async def _record(self, spot: _Placed) -> Citation:
        self._check_covered(spot.source)
        citation = self.state.find(spot.source, spot.chunk_id)
        if citation is None:
            citation = self._build(spot, index=len(self.state.citations) + 1)
            self.state.citations.append(citation)
        if citation not in self.cited:
            self.cited.append(citation)
        return citation

    @staticmethod
    def _build(spot: _Placed, index: int) -> Citation:
        if spot.result is not None:
            r = spot.result
            own = spot.chunk if spot.chunk is not None else r
            return Citation(
                index=index,
                source=spot.source,
                document_id=r.document_id or "",
                chunk_id=spot.chunk_id,
                chunk_ids=list(r.chunk_ids) or [spot.chunk_id],
                document_uri=r.document_uri,
                document_title=r.document_title,
                document_meta=dict(r.document_meta),
                page_numbers=list(own.page_numbers),
                boxes=list(own.boxes),
                headings=list(own.headings),
                content=own.content,
                context=r.content if r.content != own.content else None,
            )
        chunk = spot.chunk
        assert chunk is not None
        doc = spot.document
        return Citation(
            index=index,
            source=spot.source,
            document_id=chunk.document_id or "",
            chunk_id=spot.chunk_id,
            chunk_ids=[spot.chunk_id],
            document_uri=doc.uri if doc else None,
            document_title=doc.title if doc else None,
            document_meta=dict(doc.metadata) if doc else {},
            page_numbers=list(chunk.page_numbers),
            boxes=list(chunk.boxes),
            headings=list(chunk.headings),
            content=chunk.content,
        )
