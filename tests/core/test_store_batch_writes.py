"""Writing several documents at once (``Store.upsert_documents``, docs/storage.md)."""

from __future__ import annotations

import re
import uuid

import pytest

from haiku.core.models import Chunk, Document
from haiku.core.scope import DatabaseScope
from haiku.core.store import Store, maintenance_steps
from haiku.core.store.indexes import Indexes


def item(uri: str, *texts: str, fake_embed, doc_id: str | None = None):
    chunks = [Chunk(content=text, order=i) for i, text in enumerate(texts)]
    document = Document(id=doc_id, uri=uri, title=uri, content=" ".join(texts))
    return document, chunks, [fake_embed(t) for t in texts]


async def chunk_texts(store: Store, document_id: str) -> list[str]:
    return [c.content for c in await store.reads.get_chunks(document_id)]


async def test_a_batch_writes_every_document_with_its_chunks_in_the_given_order(store, fake_embed):
    stored = await store.writer().documents.upsert_documents(
        [item(f"file:///{n}.md", f"doc {n} one", f"doc {n} two", fake_embed=fake_embed) for n in range(5)]
    )
    assert [d.uri for d in stored] == [f"file:///{n}.md" for n in range(5)]
    assert all(uuid.UUID(d.id).version == 4 and d.source == "papers" for d in stored)
    assert len({d.id for d in stored}) == 5
    for n, doc in enumerate(stored):
        assert await chunk_texts(store, doc.id) == [f"doc {n} one", f"doc {n} two"]
    assert await store.reads.count_documents() == 5 and await store.reads.count_chunks() == 10


async def test_a_batch_replacing_an_existing_uri_keeps_its_id_and_creation_time(store, fake_embed):
    (first,) = await store.writer().documents.upsert_documents(
        [item("file:///a.md", "old one", "old two", fake_embed=fake_embed)]
    )
    stored = await store.writer().documents.upsert_documents(
        [
            item("file:///b.md", "bee", fake_embed=fake_embed),
            item("file:///a.md", "new one", fake_embed=fake_embed),
            item("file:///c.md", "sea", fake_embed=fake_embed),
        ]
    )
    assert stored[1].id == first.id
    assert stored[1].created_at == first.created_at
    assert stored[1].updated_at >= first.updated_at
    assert await store.reads.count_documents() == 3


async def test_a_batch_replaces_the_chunks_of_a_rewritten_document_leaving_no_orphan(store, fake_embed):
    (first,) = await store.writer().documents.upsert_documents(
        [item("file:///a.md", "old one", "old two", "old three", fake_embed=fake_embed)]
    )
    await store.writer().documents.upsert_documents(
        [
            item("file:///a.md", "new one", fake_embed=fake_embed),
            item("file:///b.md", "bee", fake_embed=fake_embed),
        ]
    )
    assert await chunk_texts(store, first.id) == ["new one"]
    assert await store.reads.count_chunks() == 2
    assert await store.writer().orphans.remove_orphan_chunks() == 0


async def test_a_document_given_by_id_keeps_that_id_and_its_creation_time(store, fake_embed):
    (first,) = await store.writer().documents.upsert_documents([item("file:///a.md", "one", fake_embed=fake_embed)])
    (again,) = await store.writer().documents.upsert_documents(
        [item("file:///renamed.md", "two", fake_embed=fake_embed, doc_id=first.id)]
    )
    assert again.id == first.id and again.created_at == first.created_at
    assert (await store.reads.get_document_by_id(first.id)).uri == "file:///renamed.md"
    assert await store.reads.count_documents() == 1


async def test_two_items_for_one_uri_in_a_batch_store_the_last_one_once(store, fake_embed):
    stored = await store.writer().documents.upsert_documents(
        [
            item("file:///a.md", "first", "words", fake_embed=fake_embed),
            item("file:///a.md", "second", fake_embed=fake_embed),
        ]
    )
    assert stored[0].id == stored[1].id
    assert await chunk_texts(store, stored[0].id) == ["second"]
    assert await store.reads.count_documents() == 1 and await store.reads.count_chunks() == 1


async def test_a_document_without_chunks_in_a_batch_loses_its_old_chunks(store, fake_embed):
    (first,) = await store.writer().documents.upsert_documents([item("file:///a.md", "one", "two", fake_embed=fake_embed)])
    await store.writer().documents.upsert_documents([item("file:///a.md", fake_embed=fake_embed)])
    assert await store.reads.get_document_by_id(first.id) is not None
    assert await store.reads.count_chunks() == 0


async def test_a_batch_with_a_mismatched_item_writes_nothing(store, fake_embed):
    good = item("file:///a.md", "one", fake_embed=fake_embed)
    bad = (Document(uri="file:///b.md"), [Chunk(content="x")], [])
    with pytest.raises(ValueError, match=re.escape("file:///b.md")):
        await store.writer().documents.upsert_documents([good, bad])
    assert await store.reads.count_documents() == 0 and await store.reads.count_chunks() == 0


async def test_a_reader_never_sees_a_batched_document_with_a_mixed_or_partial_set_of_chunks(
    db_config, fake_embed, monkeypatch, read_while_writing
):
    """A writer rewrites three documents per batch, over and over; a second store polls them meanwhile."""
    monkeypatch.setattr(maintenance_steps, "COMPACT_AT_FRAGMENTS", 3)
    config = db_config("papers")
    ref = DatabaseScope.resolve(config).databases[0]
    writer = await Store.open(ref, config, create=True)
    reader = await Store.open(ref, config, read_only=True)
    uris = [f"file:///doc{k}.md" for k in range(3)]
    rounds = 10

    def version_chunks(k: int, n: int) -> list[str]:
        return [f"doc{k} version{n} part{i} shared words" for i in range(2 + (n + k) % 4)]

    async def write(n: int) -> list[Document]:
        return await writer.writer().documents.upsert_documents(
            [item(uri, *version_chunks(k, n), fake_embed=fake_embed) for k, uri in enumerate(uris)]
        )

    docs = await write(0)
    observed: list[tuple[int, list[str]]] = []

    async def read():
        for k, doc in enumerate(docs):
            observed.append((k, [c.content for c in await reader.reads.get_chunks(doc.id)]))

    try:
        await read_while_writing(write, read, rounds)
    finally:
        await reader.close()
        await writer.close()
    seen_versions = {re.search(r"version(\d+)", c[0]).group(1) for _, c in observed if c}
    assert len(seen_versions) > 2  # the reader really overlapped several writes
    for k, contents in observed:
        versions = {re.search(r"version(\d+)", c).group(1) for c in contents}
        assert len(versions) == 1, contents  # never empty, never two versions
        assert sorted(contents) == sorted(version_chunks(k, int(versions.pop()))), contents


# --- loading many documents (Store.load_documents) ----------------------------------------------


async def test_loading_many_documents_writes_them_all_refreshing_indexes_once(store, fake_embed, monkeypatch):
    refreshes = []
    real_upkeep = Indexes.upkeep_after_write

    async def counted(self, *args, **kwargs):
        refreshes.append(args)
        return await real_upkeep(self, *args, **kwargs)

    monkeypatch.setattr(Indexes, "upkeep_after_write", counted)
    seen: list[int] = []
    items = (item(f"file:///{n}.md", f"stars and planets {n}", f"note {n}", fake_embed=fake_embed) for n in range(23))
    assert await store.writer().documents.load_documents(items, batch_size=5, progress=seen.append) == 23
    assert seen == [5, 10, 15, 20, 23]
    assert len(refreshes) == 1
    assert await store.reads.count_documents() == 23 and await store.reads.count_chunks() == 46
    found = await store.search("planets 17", search_type="fts", limit=3)
    assert found and found[0].document_uri == "file:///17.md"


async def test_loading_a_uri_already_stored_replaces_it_as_an_upsert_does(store, fake_embed):
    first = await store.writer().documents.upsert_document(*item("file:///a.md", "old text", fake_embed=fake_embed))
    assert await store.writer().documents.load_documents([item("file:///a.md", "new text", fake_embed=fake_embed)]) == 1
    (again,) = await store.reads.list_documents()
    assert again.id == first.id and await chunk_texts(store, first.id) == ["new text"]


async def test_loading_nothing_writes_nothing_and_a_bad_batch_size_is_refused(store, fake_embed):
    assert await store.writer().documents.load_documents([]) == 0
    with pytest.raises(ValueError, match="batch_size must be at least 1"):
        await store.writer().documents.load_documents([item("file:///a.md", "x", fake_embed=fake_embed)], batch_size=0)
