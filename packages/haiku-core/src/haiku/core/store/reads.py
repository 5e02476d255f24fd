"""Reading documents and chunks (docs/storage.md, "Consistency"; docs/client.md).

Reads take no lock. A chunk is current when its document row exists and
carries the chunk's revision (see ``schema``); any other chunk is left by a
write in progress or a crash (an orphan of a new or deleted document, or the
other version of an updated one), and every read skips it.

The documents and chunks tables are two LanceDB tables with handles that
move to new versions on their own, and a read takes one after the other: a
read may see a document row of one revision and chunks of a view taken
before (or after) the update that made it. Such a read finds chunks whose
document row exists with another revision; ``consistent_read`` then brings
every table handle to the latest version and reads again (at most
``READ_ATTEMPTS`` times: chunks of a write still in flight, or left by a
crash until the next write removes them, stay skipped). Without it a reader
could see a document with no chunks for as long as a handle stays stale.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Iterable, Sequence
from contextvars import ContextVar
from typing import Any, TypeVar

from haiku.core.models import Chunk, Document
from haiku.core.sql import sql_in, sql_string
from haiku.core.store._document_rows import KeptDocumentRows
from haiku.core.store._failures import names_read_failures
from haiku.core.store.filters import check_single_expression, filter_error
from haiku.core.store.handles import Handles
from haiku.core.store.schema import DOCUMENT_FIELDS, REVISION, chunk_from_row, document_from_row

_IN_BATCH = 1000


def batches(values: Sequence[str], size: int = _IN_BATCH) -> Iterable[Sequence[str]]:
    """``values`` in slices short enough for one ``IN (…)`` clause each."""
    for start in range(0, len(values), size):
        yield values[start : start + size]


READ_ATTEMPTS = 3
# Set by the outermost consistent read of a task (and the tasks it starts): one
# flag, raised when a chunk's document row exists with another revision.
_skew: ContextVar[list[bool] | None] = ContextVar("haiku_store_read_skew", default=None)
F = TypeVar("F", bound=Callable[..., Awaitable[Any]])


def is_current(chunk_revision: str | None, document_row: dict[str, Any] | None) -> bool:
    """Whether a chunk with this revision belongs to the document row as it now stands."""
    current = document_row is not None and chunk_revision == document_row.get(REVISION)
    if not current and document_row is not None:
        seen = _skew.get()
        if seen is not None:
            seen[0] = True
    return current


def consistent_read(method: F) -> F:
    """Read again, after bringing every table handle up to date, when the read saw skew (module docstring).

    Decorates a method of a part holding the store's ``handles``.
    """

    @functools.wraps(method)
    async def read(self: Any, *args: Any, **kwargs: Any) -> Any:
        handles: Handles = self.handles
        if _skew.get() is not None:  # inside another consistent read: that one retries
            return await method(self, *args, **kwargs)
        for attempt in range(READ_ATTEMPTS):
            seen = [False]
            token = _skew.set(seen)
            try:
                result = await method(self, *args, **kwargs)
            finally:
                _skew.reset(token)
            if not seen[0] or handles.tag is not None or attempt == READ_ATTEMPTS - 1:
                return result
            await handles.refresh_to_latest()
        return result

    return read  # type: ignore[return-value]


class Reads:
    """Lookups, listings and counts of documents and chunks; no lock taken."""

    def __init__(self, handles: Handles) -> None:
        self.handles = handles
        self.kept_rows = KeptDocumentRows()

    # --- helpers for the other parts ----------------------------------------------
    @property
    def name(self) -> str | None:
        return self.handles.name

    async def filtered(self, coro_factory: Callable[[], Awaitable[Any]], filter: str | None) -> Any:
        """Run a documents query built with the caller's filter, naming the filter when it is invalid."""
        check_single_expression(filter)
        try:
            return await coro_factory()
        except Exception as exc:
            if filter is None:
                raise
            raise filter_error(filter, exc) from exc

    async def document_ids_matching(self, filter: str) -> list[str]:
        rows = await self.filtered(
            lambda: self.handles.documents.query().where(filter).select(["id"]).to_arrow(), filter
        )
        return rows.column("id").to_pylist()

    async def document_rows(
        self, ids: Iterable[str], *, include_content: bool = False
    ) -> dict[str, dict[str, Any]]:
        """The document rows of these ids (revision included), by id; absent ids are left out."""
        wanted = sorted({i for i in ids if i})
        columns = self.handles.document_columns(include_content)
        documents = self.handles.documents
        if not include_content and wanted:
            kept = await self.kept_rows.rows(
                await documents.version(),
                wanted,
                documents.count_rows,
                lambda: documents.query().select(columns).to_list(),
            )
            if kept is not None:
                return kept
        found: dict[str, dict[str, Any]] = {}
        for batch in batches(wanted):
            rows = await self.handles.documents.query().where(sql_in("id", batch)).select(columns).to_list()
            found.update((row["id"], row) for row in rows)
        return found

    # --- documents ----------------------------------------------------------------
    @names_read_failures
    async def count_documents(self, filter: str | None = None) -> int:
        self.handles.require_open()
        return await self.filtered(lambda: self.handles.documents.count_rows(filter), filter)

    @names_read_failures
    async def count_chunks(self) -> int:
        self.handles.require_open()
        return await self.handles.chunks.count_rows()

    @names_read_failures
    async def count_orphan_chunks(self) -> int:
        """Chunks no reader shows (see the module docstring); the next write removes them."""
        self.handles.require_open()
        chunk_columns = self.handles.with_revision(["document_id"])
        chunks = (await self.handles.chunks.query().select(chunk_columns).to_arrow()).to_pylist()
        documents = await self.document_rows(row["document_id"] for row in chunks)
        return sum(1 for row in chunks if not is_current(row.get(REVISION), documents.get(row["document_id"])))

    @names_read_failures
    async def list_documents(
        self,
        limit: int | None = None,
        offset: int | None = None,
        filter: str | None = None,
        include_content: bool = False,
    ) -> list[Document]:
        """Documents ordered by creation time, then id; ``source`` set on each."""
        self.handles.require_open()
        if limit is not None and limit <= 0:
            return []
        from lancedb.query import ColumnOrdering

        columns = [*DOCUMENT_FIELDS, "content"] if include_content else list(DOCUMENT_FIELDS)
        query = (
            self.handles.documents.query()
            .select(columns)
            .order_by([ColumnOrdering(column_name="created_at"), ColumnOrdering(column_name="id")])
        )
        if filter:
            query = query.where(filter)
        if offset:
            query = query.offset(offset)
        if limit is not None:
            query = query.limit(limit)
        rows = await self.filtered(query.to_list, filter)
        return [document_from_row(row, self.name) for row in rows]

    @names_read_failures
    async def get_document_by_id(self, document_id: str) -> Document | None:
        return await self._document_where(f"id = {sql_string(document_id)}")

    @names_read_failures
    async def get_document_by_uri(self, uri: str) -> Document | None:
        return await self._document_where(f"uri = {sql_string(uri)}")

    async def _document_where(self, where: str) -> Document | None:
        self.handles.require_open()
        rows = await self.handles.documents.query().where(where).limit(1).to_list()
        return document_from_row(rows[0], self.name) if rows else None

    @names_read_failures
    async def get_documents_by_ids(self, ids: Sequence[str]) -> dict[str, Document]:
        self.handles.require_open()
        rows = await self.document_rows(ids, include_content=True)
        return {doc_id: document_from_row(row, self.name) for doc_id, row in rows.items()}

    # --- chunks -------------------------------------------------------------------
    @names_read_failures
    @consistent_read
    async def get_chunk_by_id(self, chunk_id: str, *, with_vector: bool = False) -> Chunk | None:
        self.handles.require_open()
        # Mid-update a chunk id the writer kept may be stored twice, once per revision.
        rows = (
            await self.handles.chunks.query()
            .where(f"id = {sql_string(chunk_id)}")
            .select(self.handles.chunk_columns(with_vector))
            .to_list()
        )
        documents = await self.document_rows(row["document_id"] for row in rows)
        for row in rows:
            if is_current(row.get(REVISION), documents.get(row["document_id"])):
                return chunk_from_row(row, self.name)
        return None

    @names_read_failures
    @consistent_read
    async def chunk_counts(self, document_ids: Sequence[str]) -> dict[str, int]:
        """Each document's current chunks counted, reading only the chunks' document ids
        and revisions; a document with none counts 0, an absent id is left out."""
        self.handles.require_open()
        documents = await self.document_rows(document_ids)
        counts = dict.fromkeys(documents, 0)
        columns = self.handles.with_revision(["document_id"])
        for batch in batches(sorted(documents)):
            rows = await self.handles.chunks.query().where(sql_in("document_id", batch)).select(columns).to_arrow()
            for row in rows.to_pylist():
                if is_current(row.get(REVISION), documents.get(row["document_id"])):
                    counts[row["document_id"]] += 1
        return counts

    @names_read_failures
    @consistent_read
    async def get_chunks(self, document_id: str, *, with_vectors: bool = False) -> list[Chunk]:
        """The document's current chunks by ``order``; none when the document row is absent."""
        self.handles.require_open()
        document = (await self.document_rows([document_id])).get(document_id)
        if document is None:
            return []
        columns = self.handles.chunk_columns(with_vectors)
        rows = await (
            self.handles.chunks.query().where(f"document_id = {sql_string(document_id)}").select(columns).to_list()
        )
        rows = [row for row in rows if is_current(row.get(REVISION), document)]
        rows.sort(key=lambda row: (row.get("chunk_order") or 0, row["id"]))
        return [chunk_from_row(row, self.name) for row in rows]
