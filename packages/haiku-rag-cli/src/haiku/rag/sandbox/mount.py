"""The ``/documents`` tree the sandbox sees: the selected databases' documents only.

One flat namespace ``/documents/{id}/`` rests on ids being UUID4; a database
copied from another breaks that, so an id held by two selected databases is
refused rather than resolved to whichever arrived last.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from haiku.core.fusion import round_robin
from haiku.core.models import Chunk, Document
from haiku.rag.sandbox.errors import SharedDocumentIdError

if TYPE_CHECKING:
    from haiku.rag.client import HaikuRAG

Admit = Callable[[str | None, str | None], bool]
# Chunk lookups run a few at a time: each is a LanceDB scan of one document's rows.
_CONCURRENT_LOOKUPS = 8


@dataclass(frozen=True)
class MountedDocument:
    source: str | None
    document: Document
    chunks: list[Chunk]

    def metadata(self) -> dict[str, Any]:
        """metadata.json: no ``source``, the tree is one flat namespace."""
        d = self.document
        return {
            "id": d.id,
            "uri": d.uri,
            "title": d.title,
            "metadata": d.metadata,
            "created_at": d.created_at.isoformat(),
            "updated_at": d.updated_at.isoformat(),
        }

    def listing(self) -> dict[str, Any]:
        """What the sandbox's list_documents() returns for this document."""
        return {**self.metadata(), "source": self.source}


def _shared_id_error(doc_id: str, sources: Sequence[str | None]) -> SharedDocumentIdError:
    names = " and ".join(str(s) for s in sources)
    return SharedDocumentIdError(
        f"document id {doc_id} is held by databases {names}, and the sandbox mounts one document per id "
        "at /documents/{id}/; select one of them with sources"
    )


async def _admitted(
    clients: Sequence[HaikuRAG], *, filter: str | None, admit: Admit | None, include_content: bool
) -> list[list[tuple[HaikuRAG, Document]]]:
    """Each client's documents that pass ``filter`` and ``admit``; a shared id refused."""
    groups = await asyncio.gather(
        *(c.list_documents(filter=filter, include_content=include_content) for c in clients)
    )
    kept: list[list[tuple[HaikuRAG, Document]]] = []
    holders: dict[str, str | None] = {}
    for client, documents in zip(clients, groups, strict=True):
        source = client.source
        group = []
        for document in documents:
            if document.id is None or (admit is not None and not admit(source, document.id)):
                continue
            if document.id in holders and holders[document.id] != source:
                raise _shared_id_error(document.id, [holders[document.id], source])
            holders[document.id] = source
            group.append((client, document))
        kept.append(group)
    return kept


async def check_mountable(
    clients: Sequence[HaikuRAG], *, filter: str | None = None, admit: Admit | None = None
) -> None:
    """Raise SharedDocumentIdError when these documents cannot share one ``/documents`` tree;
    reads ids only."""
    await _admitted(clients, filter=filter, admit=admit, include_content=False)


async def collect(
    clients: Sequence[HaikuRAG], *, filter: str | None = None, admit: Admit | None = None
) -> list[MountedDocument]:
    """The documents of ``clients`` (filtered), interleaved round-robin; shared ids refused."""
    kept = await _admitted(clients, filter=filter, admit=admit, include_content=True)

    gate = asyncio.Semaphore(_CONCURRENT_LOOKUPS)

    async def mounted(client: HaikuRAG, document: Document) -> MountedDocument:
        async with gate:
            chunks = await client.get_chunks(document.id or "")
        return MountedDocument(client.source, document, chunks)

    built = [list(await asyncio.gather(*(mounted(c, d) for c, d in group))) for group in kept]
    return round_robin(built)


def write_tree(root: Path, documents: Sequence[MountedDocument]) -> None:
    """``root/{id}/metadata.json``, ``content.txt`` and ``chunks.jsonl`` per document."""
    root.mkdir(parents=True, exist_ok=True)
    for item in documents:
        folder = root / str(item.document.id)
        folder.mkdir()
        (folder / "metadata.json").write_text(
            json.dumps(item.metadata(), ensure_ascii=False, indent=2, default=str), encoding="utf-8"
        )
        (folder / "content.txt").write_text(item.document.content or "", encoding="utf-8")
        with (folder / "chunks.jsonl").open("w", encoding="utf-8") as fh:
            for chunk in item.chunks:
                row = {
                    "id": chunk.id,
                    "document_id": chunk.document_id,
                    "order": chunk.order,
                    "content": chunk.content,
                    "headings": chunk.headings,
                    "page_numbers": chunk.page_numbers,
                    "metadata": chunk.metadata,
                }
                fh.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
