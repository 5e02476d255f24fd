"""What the chat app shows, as plain text built from the client: the documents a filter can
pick, a citation's grounding and the databases' info. No Textual here."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from haiku.rag.qa.render import citation_header

if TYPE_CHECKING:
    from haiku.core.models import Citation
    from haiku.rag.client import DatabaseInfo, HaikuRAG


@dataclass(frozen=True)
class Pickable:
    """A document the filter can pick: the database holding it, its id and how it reads."""

    source: str | None
    document_id: str
    label: str

    @property
    def pair(self) -> tuple[str | None, str]:
        return (self.source, self.document_id)


async def pickable_documents(client: HaikuRAG) -> list[Pickable]:
    """Every document of every database the client covers, database by database, in order.

    Labels name the database when there are several ("wiki: Volcanoes").
    """
    clients = await client.clients_covering()
    listings = await asyncio.gather(*(c.list_documents() for c in clients))
    several = len(clients) > 1
    picks = []
    for reader, documents in zip(clients, listings, strict=True):
        for document in documents:
            if document.id is None:
                continue
            title = document.title or document.uri or document.id
            prefix = f"{reader.source}: " if several and reader.source is not None else ""
            picks.append(Pickable(reader.source, document.id, prefix + title))
    return picks


def filter_summary(pairs: Sequence[tuple[str | None, str]] | None, picks: Sequence[Pickable]) -> str:
    """"Filter: wiki: Volcanoes, …" by the documents' labels, or "every document"."""
    if not pairs:
        return "Filter: every document"
    labels = {p.pair: p.label for p in picks}
    return "Filter: " + ", ".join(labels.get(pair, f"{pair[0]}:{pair[1]}") for pair in pairs)


def grounding_text(citation: Citation, *, label: bool) -> str:
    """Where a citation rests: its document, section, pages and the cited text."""
    lines = [citation_header(citation, label=label)]
    if citation.document_uri:
        lines.append(f"document: {citation.document_uri}")
    if citation.headings:
        lines.append("section: " + " > ".join(citation.headings))
    pages = ", ".join(str(p) for p in citation.page_numbers)
    lines.append(f"pages: {pages}" if pages else "pages: none recorded (the source has no pages)")
    lines.append(f"chunk: {citation.chunk_id}")
    lines += ["", citation.content.strip()]
    return "\n".join(lines)


async def database_infos(client: HaikuRAG) -> list[DatabaseInfo]:
    clients = await client.clients_covering()
    return list(await asyncio.gather(*(c.database().info() for c in clients)))


def info_text(info: DatabaseInfo) -> str:
    """A database in a few lines: where it is, what embeds it, what it holds."""
    embedder = info.embedder or {}
    identity = f"{embedder.get('provider', '?')}/{embedder.get('model', '?')} ({info.vector_dim} dims)"
    lines = [
        f"{info.name or '(unnamed)'}" + (f" at tag {info.tag}" if info.tag else ""),
        f"  location: {info.configured_location}",
        f"  embedder: {identity}",
        f"  documents: {info.documents}, chunks: {info.chunks}",
        f"  schema version: {info.schema_version}; tags: {info.tags}",
    ]
    if info.pending_migrations:
        lines.append(f"  pending migrations: {len(info.pending_migrations)} (run `haiku-rag migrate`)")
    return "\n".join(lines)
