"""Document rows kept in memory by a reading store (haiku.core.store._document_rows; docs/storage.md, "Memory")."""

from __future__ import annotations

import pytest

from haiku.core.store import _document_rows


@pytest.fixture
async def store(store, write_doc):
    for index, text in enumerate(["cells divide", "stars shine", "bread rises"]):
        await write_doc(store, f"file:///doc{index}.md", text, title=f"title {index}")
    return store


@pytest.fixture
async def reader(store):
    from haiku.core.store import Store

    opened = await Store.open(store.ref, store.config, read_only=True)
    yield opened
    await opened.close()


@pytest.fixture
def document_queries(monkeypatch):
    """How many queries of the documents table have run."""
    from lancedb.table import AsyncTable

    seen = {"documents": 0}
    original = AsyncTable.query

    def counted(self, *args, **kwargs):
        if self.name == "documents":
            seen["documents"] += 1
        return original(self, *args, **kwargs)

    monkeypatch.setattr(AsyncTable, "query", counted)
    return seen


async def test_a_reader_reads_every_document_row_once_per_table_version(reader, fake_embed, document_queries):
    for query in ("cells", "stars", "bread", "cells stars"):
        results = await reader.search(query, query_vector=fake_embed(query), limit=3)
        assert results and all(result.document_title for result in results)
    assert document_queries["documents"] == 2  # its own rows, then every row once


async def test_a_reader_sees_a_write_as_soon_as_a_query_would(store, reader, write_doc, fake_embed):
    before = await reader.search("stars", query_vector=fake_embed("stars"), limit=1)
    assert before[0].document_title == "title 1"
    await write_doc(store, "file:///doc1.md", "stars shine", title="renamed")
    after = await reader.search("stars", query_vector=fake_embed("stars"), limit=1)
    assert after[0].document_title == "renamed"


async def test_a_larger_database_reads_its_rows_per_search(reader, fake_embed, document_queries, monkeypatch):
    monkeypatch.setattr(_document_rows, "KEPT_DOCUMENTS", 2)
    for query in ("cells", "stars"):
        results = await reader.search(query, query_vector=fake_embed(query), limit=1)
        assert results[0].document_title
    assert document_queries["documents"] == 2


async def test_a_store_that_writes_keeps_no_rows(store, write_doc, fake_embed, document_queries):
    await write_doc(store, "file:///doc3.md", "yeast grows")
    document_queries["documents"] = 0
    for query in ("cells", "stars"):
        assert (await store.search(query, query_vector=fake_embed(query), limit=1))[0].document_title
    assert document_queries["documents"] == 2
