"""What the inspector reads, through the public client only (docs/cli.md, "inspect").

Plain async reads with no Textual in them, so each can be tested and reused:
the databases of the scope, a database's documents and a document's chunks,
a search over the scope, the context the model would get for a chunk, a
database's report, and a chunk's grounding page by page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

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


# Whether the chunk's pages are stored as images: ``stored``; ``pdfs_only`` (the document is not a
# PDF, and only PDF pages are stored as images); ``not_stored`` (a PDF whose pages were stored
# without images); ``no_layout`` (the chunk is not placed on its pages: no boxes to draw).
PageImageState = Literal["stored", "pdfs_only", "not_stored", "no_layout"]


@dataclass(frozen=True)
class PageView:
    """One page of a chunk's visual grounding.

    A terminal shows no page picture: ``blocks`` (every chunk of the document on
    that page, in order) stand in for it, and ``image`` says whether the page is
    stored as an image (``visualize`` draws the chunk on it), and if not, why
    (``kind`` names a format that is not a PDF).
    """

    page: int | None
    blocks: list[PageBlock] = field(default_factory=list)
    image: PageImageState = "no_layout"
    chunk_id: str | None = None
    kind: str | None = None


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
        database = reader.database()
        return DatabaseReport(await database.info(), await database.list_tags())

    async def pages(self, entry: DatabaseEntry, chunk: Chunk) -> list[PageView]:
        """The chunk's grounding, one view per page it lies on (one view when it names no page)."""
        if not chunk.page_numbers or chunk.document_id is None:
            return [PageView(None, [PageBlock(chunk.content, chunk.order, True)], chunk_id=chunk.id)]
        siblings = await self.chunks(entry, chunk.document_id)
        image, kind = await self._page_images(entry, chunk)
        views = []
        for page in sorted(set(chunk.page_numbers)):
            on_page = [c for c in siblings if page in c.page_numbers] or [chunk]
            blocks = [PageBlock(c.content, c.order, c.id == chunk.id) for c in on_page]
            views.append(PageView(page, blocks, image, chunk.id, kind))
        return views

    async def _page_images(self, entry: DatabaseEntry, chunk: Chunk) -> tuple[PageImageState, str | None]:
        """Whether every page the chunk's boxes lie on is stored as an image, by the rule of
        ``visualize`` (docs/client.md#pictures-and-pages); else why not."""
        if not chunk.boxes or chunk.document_id is None:
            return "no_layout", None
        reader = await self.client.reader_for(entry.name) or self.client
        pages = sorted({box.page for box in chunk.boxes})
        stored = await reader.store.structure.get_page_images(chunk.document_id, pages)
        if all(page in stored for page in pages):
            return "stored", None
        document = await reader.get_document_by_id(chunk.document_id)
        kind = document.format_without_page_images() if document is not None else None
        return ("pdfs_only", kind) if kind is not None else ("not_stored", None)
