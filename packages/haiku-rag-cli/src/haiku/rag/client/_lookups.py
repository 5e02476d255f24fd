"""Listing and lookups fanned out over the federation (docs/client.md#listing-and-lookups)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Literal, overload

from haiku.core.errors import LimitTooLargeError
from haiku.core.fusion import round_robin
from haiku.core.models import Chunk, Document
from haiku.core.store.filters import check_document_filter

if TYPE_CHECKING:
    from haiku.core.store import Store
    from haiku.rag.client._federation import Reach


async def list_documents(
    reach: Reach,
    *,
    limit: int | None,
    offset: int | None,
    filter: str | None,
    include_content: bool,
    sources: Sequence[str] | None,
) -> list[Document]:
    """One database's own listing; over several, their listings round-robin, cut to the window."""
    # As in search: a limit of 0 would answer "no documents" about a database holding some.
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    LimitTooLargeError.check(limit, reach.config.search.max_limit)
    LimitTooLargeError.check_offset(offset)
    if offset is not None and offset < 0:
        raise ValueError("offset cannot be negative")
    await check_document_filter(filter)
    if sources is not None and len(sources) == 0:
        return []
    selected = await reach.members(sources)
    if len(selected) == 1:
        return await selected[0].store.reads.list_documents(
            limit=limit, offset=offset, filter=filter, include_content=include_content
        )
    start = offset or 0
    # Each database is asked for the whole window; the merged list is cut to it.
    wanted = None if limit is None else limit + start
    groups = await asyncio.gather(
        *(
            member.store.reads.list_documents(limit=wanted, offset=None, filter=filter, include_content=include_content)
            for member in selected
        )
    )
    merged = round_robin(groups)
    return merged[start:] if limit is None else merged[start : start + limit]


async def count_documents(reach: Reach, *, filter: str | None, sources: Sequence[str] | None) -> int:
    await check_document_filter(filter)
    return await _total(reach, sources, lambda store: store.reads.count_documents(filter))


async def count_chunks(reach: Reach, *, sources: Sequence[str] | None) -> int:
    return await _total(reach, sources, lambda store: store.reads.count_chunks())


async def _total(reach: Reach, sources: Sequence[str] | None, count: Callable[[Store], Awaitable[int]]) -> int:
    """``count`` summed over the selected databases, asked together."""
    if sources is not None and len(sources) == 0:
        return 0
    selected = await reach.members(sources)
    return sum(await asyncio.gather(*(count(member.store) for member in selected)))


LookupMethod = Literal["get_document_by_id", "get_document_by_uri", "get_chunk_by_id"]


async def _answers(reach: Reach, method: str, key: str) -> list[tuple[str | None, object]]:
    """Every covered database asked ``method(key)`` together: (name, answer), in configured order."""
    selected = await reach.members(None)
    answers = await asyncio.gather(*(getattr(member.store.reads, method)(key) for member in selected))
    return [(member.store.name, answer) for member, answer in zip(selected, answers, strict=True)]


@overload
async def first_holder(
    reach: Reach,
    method: Literal["get_document_by_id", "get_document_by_uri"],
    key: str,
    source: str | None,
) -> Document | None: ...


@overload
async def first_holder(
    reach: Reach, method: Literal["get_chunk_by_id"], key: str, source: str | None
) -> Chunk | None: ...


async def first_holder(reach: Reach, method: LookupMethod, key: str, source: str | None) -> Document | Chunk | None:
    """With ``source``, ask that database alone; else ask every covered one together and
    answer from the first holder in configured order."""
    if source is not None:
        return await getattr((await reach.member(source)).store.reads, method)(key)
    answers = await _answers(reach, method, key)
    return next((answer for _, answer in answers if answer is not None), None)  # type: ignore[return-value]


async def chunks_of(reach: Reach, document_id: str, source: str | None) -> list[Chunk]:
    if source is not None:
        return await (await reach.member(source)).store.reads.get_chunks(document_id)
    answers = await _answers(reach, "get_chunks", document_id)
    return next((chunks for _, chunks in answers if chunks), [])  # type: ignore[return-value]


async def chunk_counts(reach: Reach, document_ids: Sequence[str], source: str | None) -> dict[str, int]:
    """With ``source``, that database's counts; else each id counted in the first covered database holding it."""
    if source is not None:
        return await (await reach.member(source)).store.reads.chunk_counts(document_ids)
    selected = await reach.members(None)
    merged: dict[str, int] = {}
    for counts in await asyncio.gather(*(member.store.reads.chunk_counts(document_ids) for member in selected)):
        for document_id, count in counts.items():
            merged.setdefault(document_id, count)
    return merged


async def holders(
    reach: Reach, key: str, method: Literal["get_document_by_id", "get_chunk_by_id"] = "get_document_by_id"
) -> list[str]:
    """The names of the covered databases holding a document (or, by ``method``, a chunk) with
    this id, in configured order."""
    answers = await _answers(reach, method, key)
    return [name for name, answer in answers if answer is not None and name is not None]
