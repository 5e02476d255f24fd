"""Listing and lookups across a selection (docs/client.md)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Literal, TypeVar, overload

from haiku.core.errors import LimitTooLargeError
from haiku.core.models import Chunk, Document
from haiku.core.store.filters import check_document_filter

if TYPE_CHECKING:
    from haiku.core.store import Store
    from haiku.rag.client._client import HaikuRAG

T = TypeVar("T")


def round_robin(groups: Sequence[Sequence[T]]) -> list[T]:
    """First of each group, then second of each…, in the order the groups come."""
    merged: list[T] = []
    longest = max((len(group) for group in groups), default=0)
    for position in range(longest):
        merged.extend(group[position] for group in groups if position < len(group))
    return merged


async def _selected(client: HaikuRAG, sources: Sequence[str] | None) -> list[HaikuRAG]:
    clients = await client.clients_covering(sources)
    clients.sort(key=lambda c: c._order)
    return clients


async def list_documents(
    client: HaikuRAG,
    *,
    limit: int | None,
    offset: int | None,
    filter: str | None,
    include_content: bool,
    sources: Sequence[str] | None,
) -> list[Document]:
    # As in search: a limit of 0 would answer "no documents" about a database holding some.
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    LimitTooLargeError.check(limit, client.config.search.max_limit)
    LimitTooLargeError.check_offset(offset)
    if offset is not None and offset < 0:
        raise ValueError("offset cannot be negative")
    await check_document_filter(filter)
    if sources is not None and len(sources) == 0:
        return []
    selected = await _selected(client, sources)
    if len(selected) == 1:
        return await selected[0]._open_store().list_documents(
            limit=limit, offset=offset, filter=filter, include_content=include_content
        )
    start = offset or 0
    # Each database is asked for the whole window; the merged list is cut to it.
    wanted = None if limit is None else limit + start
    groups = await asyncio.gather(
        *(
            c._open_store().list_documents(limit=wanted, offset=None, filter=filter, include_content=include_content)
            for c in selected
        )
    )
    merged = round_robin(groups)
    return merged[start:] if limit is None else merged[start : start + limit]


async def count_documents(client: HaikuRAG, *, filter: str | None, sources: Sequence[str] | None) -> int:
    await check_document_filter(filter)
    return await _total(client, sources, lambda store: store.count_documents(filter))


async def count_chunks(client: HaikuRAG, *, sources: Sequence[str] | None) -> int:
    return await _total(client, sources, lambda store: store.count_chunks())


async def _total(
    client: HaikuRAG, sources: Sequence[str] | None, count: Callable[[Store], Awaitable[int]]
) -> int:
    """``count`` summed over the selected databases, asked together."""
    if sources is not None and len(sources) == 0:
        return 0
    selected = await _selected(client, sources)
    return sum(await asyncio.gather(*(count(c._open_store()) for c in selected)))


@overload
async def first_holder(
    client: HaikuRAG,
    method: Literal["get_document_by_id", "get_document_by_uri"],
    key: str,
    source: str | None,
) -> Document | None: ...


@overload
async def first_holder(
    client: HaikuRAG, method: Literal["get_chunk_by_id"], key: str, source: str | None
) -> Chunk | None: ...


async def first_holder(client: HaikuRAG, method: str, key: str, source: str | None) -> Document | Chunk | None:
    """With ``source``, ask that database alone; else ask every covered one together and
    answer from the first holder in configured order."""
    if source is not None:
        reader = await client.reader_for(source)
        assert reader is not None
        return await getattr(reader._open_store(), method)(key)
    selected = await _selected(client, None)
    answers = await asyncio.gather(*(getattr(c._open_store(), method)(key) for c in selected))
    return next((answer for answer in answers if answer is not None), None)


async def chunks_of(client: HaikuRAG, document_id: str, source: str | None) -> list[Chunk]:
    if source is not None:
        reader = await client.reader_for(source)
        assert reader is not None
        return await reader._open_store().get_chunks(document_id)
    selected = await _selected(client, None)
    answers = await asyncio.gather(*(c._open_store().get_chunks(document_id) for c in selected))
    return next((chunks for chunks in answers if chunks), [])
