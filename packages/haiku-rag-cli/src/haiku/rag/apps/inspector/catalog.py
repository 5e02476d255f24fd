"""What the inspector reads, through the public client only (docs/cli.md, "inspect").

Plain async reads with no Textual in them, so each can be tested and reused:
the databases of the scope, a database's documents and a document's chunks,
a search over the scope, the context the model would get for a chunk, a
database's report, and a chunk's grounding page by page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from haiku.core.errors import HaikuError
from haiku.core.models import Chunk, Document, SearchResult

if TYPE_CHECKING:
    from haiku.core.store import TagInfo
    from haiku.rag.client import DatabaseInfo, HaikuRAG


# What a read can fail with that the inspector shows in place instead of stopping: the
# product's own errors (a database missing or damaged, a mismatch), the file system's, and
# a refused query (ValueError).
READ_ERRORS: tuple[type[Exception], ...] = (HaikuError, OSError, ValueError)


@dataclass(frozen=True)
class DatabaseEntry:
    """One database of the scope: its configured name (None for the legacy unnamed one) and tag."""

    name: str | None
    label: str
    tag: str | None = None

    @property
    def sources(self) -> list[str] | None:
        """The selection naming this database alone (None: the one unnamed database)."""
        return None if self.name is None else [self.name]

    @property
    def heading(self) -> str:
        return self.label if self.tag is None else f"{self.label} @ {self.tag}"


@dataclass(frozen=True)
class PageBlock:
    """A chunk's text as it stands on a page; ``selected`` marks the chunk being grounded."""

    text: str
    order: int
    selected: bool


@dataclass(frozen=True)
class PageView:
    """One page of a chunk's visual grounding.

    ``image`` is the page picture with the chunk's boxes drawn, for a database
    that stores page images; until then it is None and ``blocks`` (every chunk of
    the document on that page, in order) stand in for the picture.
    """

    page: int | None
    blocks: list[PageBlock] = field(default_factory=list)
    image: bytes | None = None


@dataclass(frozen=True)
class DatabaseReport:
    """What the info panel shows: the database's own report and its tags."""

    info: DatabaseInfo
    tags: list[TagInfo]


def document_matches(document: Document, text: str) -> bool:
    """The documents pane's filter: ``text`` in the title, URI or id, ignoring case."""
    needle = text.strip().casefold()
    if not needle:
        return True
    return any(needle in (value or "").casefold() for value in (document.title, document.uri, document.id))


def chunk_result(document: Document, chunk: Chunk, score: float = 0.0) -> SearchResult:
    """A chunk as a search would have returned it (the shape context expansion and the model read)."""
    return SearchResult(
        content=chunk.content,
        score=score,
        source=chunk.source if chunk.source is not None else document.source,
        chunk_id=chunk.id,
        document_id=chunk.document_id or document.id,
        document_uri=document.uri,
        document_title=document.title,
        document_meta=document.metadata,
        order=chunk.order,
        headings=list(chunk.headings),
        page_numbers=list(chunk.page_numbers),
    )


class Catalog:
    """The inspector's reads over one client (opened read-only by its caller)."""

    def __init__(self, client: HaikuRAG) -> None:
        self.client = client

    def databases(self) -> list[DatabaseEntry]:
        """The scope's databases in configured order; opens nothing."""
        return [DatabaseEntry(ref.name, ref.label, ref.tag) for ref in self.client.scope.databases]

    def entry(self, name: str | None) -> DatabaseEntry:
        for entry in self.databases():
            if entry.name == name:
                return entry
        raise KeyError(name)

    async def documents(self, entry: DatabaseEntry) -> list[Document]:
        return await self.client.list_documents(sources=entry.sources)

    async def chunks(self, entry: DatabaseEntry, document_id: str) -> list[Chunk]:
        return await self.client.get_chunks(document_id, source=entry.name)

    async def chunk_counts(self, entry: DatabaseEntry, document_ids: list[str]) -> dict[str, int]:
        return await self.client.chunk_counts(document_ids, source=entry.name)

    async def search(self, query: str) -> list[SearchResult]:
        """The scope searched as `haiku-rag search` does (its default type and limit)."""
        return list(await self.client.search(query))

    async def context(self, document: Document, chunk: Chunk, score: float = 0.0) -> str:
        """Exactly what the model reads when a search returns this chunk: expanded, then formatted.

        Expansion is the client's (``search.max_context_chars`` of neighbouring
        chunks), the text is the search tool's; ``score`` is the hit's when the
        chunk came from a search.
        """
        expanded = await self.client.expand_context([chunk_result(document, chunk, score)])
        multi = self.client.covers_multiple
        total = len(expanded)
        return "\n\n".join(r.format_for_agent(rank, total, include_collection=multi) for rank, r in enumerate(expanded, 1))

    async def report(self, entry: DatabaseEntry) -> DatabaseReport:
        reader = await self.client.reader_for(entry.name)
        if reader is None:  # the legacy unnamed database: the client is that database
            reader = self.client
        return DatabaseReport(await reader.info(), await reader.list_tags())

    async def pages(self, entry: DatabaseEntry, chunk: Chunk) -> list[PageView]:
        """The chunk's grounding, one view per page it lies on (one view when it names no page)."""
        if not chunk.page_numbers or chunk.document_id is None:
            return [PageView(None, [PageBlock(chunk.content, chunk.order, True)])]
        siblings = await self.chunks(entry, chunk.document_id)
        views = []
        for page in sorted(set(chunk.page_numbers)):
            on_page = [c for c in siblings if page in c.page_numbers] or [chunk]
            views.append(PageView(page, [PageBlock(c.content, c.order, c.id == chunk.id) for c in on_page]))
        return views
