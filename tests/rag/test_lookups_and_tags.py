"""Listing, lookups, context expansion and reading at a tag (docs/storage.md, docs/client.md)."""

from __future__ import annotations

import pytest
from rag_support import EXTRA, add_document_at, build_config

from haiku.core.errors import ReadOnlyError, TagError, UnknownDatabaseError
from haiku.rag.client import HaikuRAG
from support import copy_database


async def test_list_documents_over_two_databases_alternates_and_counts_in_total(two_db):
    async with HaikuRAG(config=two_db) as client:
        documents = await client.list_documents(limit=4)
        window = await client.list_documents(limit=2, offset=1)
        everything = await client.list_documents()
    assert [d.source for d in documents] == ["papers", "wiki", "papers", "wiki"]
    assert [(d.source, d.id) for d in window] == [(d.source, d.id) for d in everything[1:3]]
    assert len(everything) == 6


async def test_list_documents_follows_configured_order_and_honours_sources(two_db):
    async with HaikuRAG(config=two_db) as client:
        reordered = await client.list_documents(limit=2, sources=["wiki", "papers"])
        only_wiki = await client.list_documents(sources=["wiki"])
        assert await client.list_documents(sources=[]) == []
        assert await client.count_documents() == 6
        assert await client.count_documents(sources=["wiki"]) == 3
    assert [d.source for d in reordered] == ["papers", "wiki"]
    assert {d.source for d in only_wiki} == {"wiki"} and len(only_wiki) == 3


async def test_count_chunks_sums_the_selected_databases_as_each_store_counts_them(two_db):
    async with HaikuRAG(config=two_db) as client:
        each = {}
        for name in ("papers", "wiki"):
            reader = await client.reader_for(name)
            each[name] = await reader.store.reads.count_chunks()
        assert await client.count_chunks() == each["papers"] + each["wiki"] > 0
        assert await client.count_chunks(sources=["wiki"]) == each["wiki"]
        assert await client.count_chunks(sources=[]) == 0


async def test_list_documents_refuses_a_limit_of_0_as_search_does(two_db):
    async with HaikuRAG(config=two_db) as client:
        with pytest.raises(ValueError, match="limit must be at least 1"):
            await client.list_documents(limit=0)
        with pytest.raises(ValueError, match="limit must be at least 1"):
            await client.search("data", limit=0)


async def test_get_document_by_id_on_a_set_answers_from_the_holder(two_db, built):
    wiki_doc = built["wiki_docs"]["Cooking pasta"]
    async with HaikuRAG(config=two_db) as client:
        found = await client.get_document_by_id(wiki_doc.id)
        assert found is not None and found.source == "wiki" and found.title == "Cooking pasta"
        assert await client.get_document_by_id(wiki_doc.id, source="papers") is None
        assert (await client.get_document_by_uri(wiki_doc.uri)).source == "wiki"
        assert await client.get_document_by_id("no-such-id") is None
        with pytest.raises(UnknownDatabaseError, match="nope"):
            await client.get_document_by_id(wiki_doc.id, source="nope")


async def test_databases_holding_names_every_covered_database_holding_the_id(papers_tagged, tmp_path):
    # A live and a tagged entry of one location hold the same document ids.
    path = papers_tagged["path"]
    config = build_config(tmp_path / "data", {"papers": str(path), "papers-r1": {"location": str(path), "tag": "r1"}})
    async with HaikuRAG(config=config) as client:
        shared = next(d for d in await client.list_documents(sources=["papers-r1"]))
        added = next(d for d in await client.list_documents(sources=["papers"]) if d.title == EXTRA[0])
        assert await client.databases_holding(shared.id) == ["papers", "papers-r1"]
        assert await client.databases_holding(added.id) == ["papers"]
        assert await client.databases_holding("no-such-id") == []


async def test_chunk_lookups_take_a_source(two_db):
    async with HaikuRAG(config=two_db) as client:
        result = (await client.search("pasta in salted water", limit=1, search_type="fts"))[0]
        chunk = await client.get_chunk_by_id(result.chunk_id)
        assert chunk is not None and chunk.source == "wiki"
        assert await client.get_chunk_by_id(result.chunk_id, source="papers") is None
        chunks = await client.get_chunks(result.document_id)
        assert [c.id for c in chunks] == [result.chunk_id]


async def test_chunk_counts_read_the_named_database_or_the_first_holder(two_db):
    async with HaikuRAG(config=two_db) as client:
        wiki = await client.list_documents(sources=["wiki"])
        ids = [d.id for d in wiki]
        expected = {d.id: len(await client.get_chunks(d.id, source="wiki")) for d in wiki}
        assert await client.chunk_counts(ids, source="wiki") == expected
        assert await client.chunk_counts(ids) == expected
        assert await client.chunk_counts(ids, source="papers") == {}
        with pytest.raises(UnknownDatabaseError, match="nope"):
            await client.chunk_counts(ids, source="nope")


async def test_context_expansion_goes_through_each_results_own_database(two_db):
    async with HaikuRAG(config=two_db) as client:
        results = await client.search("learning from data", limit=4)
        expanded = await client.expand_context(results)
    by_source = {r.source for r in expanded}
    assert by_source == {r.source for r in results}
    neural = next(r for r in expanded if r.document_title == "Neural networks")
    assert "Backpropagation" in neural.content and "representations" in neural.content
    assert len(neural.chunk_ids) == 2
    assert [r.score for r in expanded] == sorted((r.score for r in expanded), reverse=True)


async def test_a_live_and_a_tagged_entry_of_one_location_return_a_shared_document_once_each(papers_tagged, tmp_path):
    path = papers_tagged["path"]
    config = build_config(tmp_path / "data", {"papers": str(path), "papers-r1": {"location": str(path), "tag": "r1"}})
    async with HaikuRAG(config=config) as client:
        documents = await client.list_documents()
        results = await client.search("Chlorophyll absorbs red and blue light", limit=2)
    photosynthesis = [d.source for d in documents if d.title == "Photosynthesis"]
    assert photosynthesis == ["papers", "papers-r1"]
    assert [d.source for d in documents if d.title == EXTRA[0]] == ["papers"]
    assert sorted(r.source for r in results) == ["papers", "papers-r1"]
    assert results[0].chunk_id == results[1].chunk_id


async def test_a_client_at_a_tag_is_read_only_and_sees_the_documents_of_then(papers_tagged, tmp_path):
    config = build_config(tmp_path / "data")
    async with HaikuRAG(db_path=papers_tagged["path"], config=config, tag="r1") as client:
        assert client.is_read_only
        titles = {d.title for d in await client.list_documents()}
        with pytest.raises(ReadOnlyError):
            await client.database().vacuum()
    assert EXTRA[0] not in titles and len(titles) == 3
    with pytest.raises(TagError, match="absent"):
        async with HaikuRAG(db_path=papers_tagged["path"], config=config, tag="absent"):
            pass


async def test_vacuum_with_zero_retention_keeps_tagged_versions_readable(built, tmp_path, embedder):
    path = copy_database(built["wiki"], tmp_path / "wiki.lancedb")
    config = build_config(tmp_path / "data")
    async with HaikuRAG(db_path=path, config=config) as client:
        await client.database().create_tag("r1")
    await add_document_at(path, config, embedder, *EXTRA)
    async with HaikuRAG(db_path=path, config=config) as client:
        assert await client.database().vacuum(retention_seconds=0)
    async with HaikuRAG(db_path=path, config=config, tag="r1") as client:
        titles = {d.title for d in await client.list_documents()}
        assert await client.search("pasta", search_type="fts")
    assert titles == {"Machine learning", "Cooking pasta", "Plate tectonics"}
