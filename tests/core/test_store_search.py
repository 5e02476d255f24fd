"""One database's search, filters, enrichment and context expansion (docs/storage.md, docs/client.md, docs/fusion.md)."""

from __future__ import annotations

import math

import pytest

from haiku.core.fusion import reciprocal_rank_fusion
from haiku.core.models import Chunk, Document, SearchResult
from haiku.core.scope import DatabaseScope
from haiku.core.store import Store
from haiku.core.store.expansion import expand_results

CORPUS = {
    "file:///bio.md": ("Biology", ["cells divide by mitosis", "proteins fold into shapes"], {"topic": "bio"}),
    "file:///astro.md": (
        "Astronomy",
        ["stars fuse hydrogen into helium", "planets orbit stars"],
        {"topic": "space"},
    ),
    "file:///cook.md": ("Cooking", ["bread needs yeast and flour", "soup simmers slowly"], {"topic": "food"}),
}


@pytest.fixture(scope="module")
async def store(tmp_path_factory, fake_embed):
    """One database holding CORPUS, shared by the read-only tests of this module."""
    from haiku.core.config import config_from_dict

    root = tmp_path_factory.mktemp("search")
    config = config_from_dict(
        {
            "storage": {"data_dir": str(root)},
            "lancedb": {"databases": {"papers": str(root / "papers.lancedb")}},
        }
    )
    opened = await Store.open(DatabaseScope.resolve(config).databases[0], config, create=True)
    for uri, (title, texts, meta) in CORPUS.items():
        chunks = [Chunk(content=text, order=i) for i, text in enumerate(texts)]
        document = Document(uri=uri, title=title, content="\n\n".join(texts), metadata=meta)
        await opened.writer().documents.upsert_document(document, chunks, [fake_embed(t) for t in texts])
    yield opened
    await opened.close()


def cosine(a, b) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / (
        math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    )


async def test_vector_search_scores_one_over_one_plus_cosine_distance(store, fake_embed):
    query = fake_embed("stars fuse hydrogen")
    results = await store.search("", query_vector=query, search_type="vector", limit=3, with_vectors=True)
    assert results[0].content == "stars fuse hydrogen into helium"
    for result in results:
        distance = 1 - cosine(query, result.vector)
        assert result.score == pytest.approx(1 / (1 + distance), abs=1e-4)
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)


async def test_results_carry_source_and_document_fields(store, fake_embed):
    [result] = await store.search("yeast", search_type="fts", limit=1)
    assert result.source == "papers"
    assert result.document_uri == "file:///cook.md"
    assert result.document_title == "Cooking"
    assert result.document_meta == {"topic": "food"}
    assert result.chunk_ids == [result.chunk_id]


async def test_fts_search_scores_by_bm25_best_first(store):
    results = await store.search("stars", search_type="fts", limit=5)
    assert {r.content for r in results} == {"stars fuse hydrogen into helium", "planets orbit stars"}
    assert all(r.score > 0 for r in results)
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)


async def test_fts_keeps_stop_words_and_accepts_punctuation(store):
    assert await store.search("into", search_type="fts", limit=5)
    assert await store.search("what's (bread)? \"yeast", search_type="fts", limit=5)
    assert await store.search("   ", search_type="fts") == []


async def test_hybrid_score_is_reciprocal_rank_fusion_of_the_vector_and_fts_lists(store, fake_embed):
    query = "planets orbit"
    vector = fake_embed(query)
    vector_list, fts_list = await store.hybrid_candidates(query, vector, limit=10)
    expected = reciprocal_rank_fusion([vector_list, fts_list], key=lambda r: r.chunk_id)[:3]
    results = await store.search(query, query_vector=vector, search_type="hybrid", limit=3)
    assert [(r.chunk_id, r.score) for r in results] == [
        (item.chunk_id, pytest.approx(s)) for item, s in expected
    ]
    assert results[0].content == "planets orbit stars"


async def test_vector_and_hybrid_search_need_a_query_vector(store):
    with pytest.raises(ValueError, match="query_vector"):
        await store.search("x", search_type="hybrid")


async def test_query_vector_of_the_wrong_dimension_is_refused_naming_the_database(store):
    with pytest.raises(ValueError, match="'papers'"):
        await store.search("x", query_vector=[1.0, 0.0], search_type="vector")


async def test_document_filter_is_applied_before_chunk_retrieval(store, fake_embed):
    results = await store.search(
        "", query_vector=fake_embed("stars"), search_type="vector", limit=3, filter="title = 'Cooking'"
    )
    assert len(results) == 2 and {r.document_title for r in results} == {"Cooking"}


async def test_document_filter_over_metadata_and_dates(store):
    assert await store.reads.count_documents("metadata LIKE '%space%'") == 1
    assert await store.reads.count_documents("created_at > TIMESTAMP '2000-01-01 00:00:00'") == 3


async def test_filter_matching_no_document_returns_nothing(store, fake_embed):
    for kind in ("vector", "fts", "hybrid"):
        assert (
            await store.search("stars", query_vector=fake_embed("stars"), search_type=kind, filter="id = 'x'")
            == []
        )


async def test_invalid_filter_raises_value_error_naming_it(store):
    with pytest.raises(ValueError, match="no_such_column"):
        await store.search("stars", search_type="fts", filter="no_such_column = 1")


async def test_with_vectors_returns_the_stored_vectors(store, fake_embed):
    [result] = await store.search(
        "", query_vector=fake_embed("soup simmers slowly"), search_type="vector", limit=1, with_vectors=True
    )
    assert result.vector == pytest.approx(fake_embed("soup simmers slowly"), abs=1e-6)
    [plain] = await store.search("", query_vector=fake_embed("soup"), search_type="vector", limit=1)
    assert plain.vector is None


async def test_list_documents_orders_by_creation_and_windows(store):
    all_docs = await store.reads.list_documents()
    assert [d.title for d in all_docs] == ["Biology", "Astronomy", "Cooking"]
    assert all(d.content == "" and d.source == "papers" for d in all_docs)
    window = await store.reads.list_documents(limit=1, offset=1, include_content=True)
    assert [d.title for d in window] == ["Astronomy"] and window[0].content
    assert [d.title for d in await store.reads.list_documents(filter="title = 'Cooking'")] == ["Cooking"]


async def test_lookups_by_id_uri_and_chunk(store):
    doc = await store.reads.get_document_by_uri("file:///astro.md")
    assert (await store.reads.get_document_by_id(doc.id)).uri == "file:///astro.md"
    assert await store.reads.get_document_by_id("nope") is None
    chunks = await store.reads.get_chunks(doc.id)
    assert (await store.reads.get_chunk_by_id(chunks[1].id)).content == "planets orbit stars"
    assert set(await store.reads.get_documents_by_ids([doc.id, "nope"])) == {doc.id}


async def test_enrich_fills_document_fields_and_drops_results_of_deleted_documents(db_config, write_doc):
    config = db_config("papers")
    own = await Store.open(DatabaseScope.resolve(config).databases[0], config, create=True)
    try:
        await write_doc(own, "file:///astro.md", "stars fuse hydrogen", title="Astronomy")
        await write_doc(own, "file:///other.md", "unrelated words", title="Other")
        bare = [
            SearchResult(content=r.content, score=r.score, chunk_id=r.chunk_id, document_id=r.document_id)
            for r in await own.search("stars", search_type="fts", limit=5)
        ]
        enriched = await own.enrich(bare)
        assert [r.document_title for r in enriched] == ["Astronomy"]
        await own.writer().documents.delete_document(bare[0].document_id)
        assert await own.enrich(bare) == []
    finally:
        await own.close()


async def test_bare_candidates_lack_document_fields_until_enriched_then_equal_checked_ones(store, fake_embed):
    query = fake_embed("stars fuse hydrogen")
    bare = await store.hybrid_candidates("stars", query, limit=4, enrich=False)
    checked = await store.hybrid_candidates("stars", query, limit=4)
    assert all(r.document_title is None and r.document_uri is None for r in [*bare[0], *bare[1]])
    assert (await store.enrich(bare[0]), await store.enrich(bare[1])) == checked


async def test_an_orphan_reaching_the_top_of_a_hybrid_search_is_dropped_and_the_limit_still_filled(
    db_config, write_doc, fake_embed
):
    config = db_config("papers")
    own = await Store.open(DatabaseScope.resolve(config).databases[0], config, create=True)
    try:
        for uri, text in (("a", "kept words"), ("b", "other words"), ("c", "more words")):
            await write_doc(own, f"file:///{uri}.md", text)
        orphan_id = await add_orphan(own, "orphaned words", fake_embed("orphaned words"))
        results = await own.search(
            "orphaned words", query_vector=fake_embed("orphaned words"), search_type="hybrid", limit=3
        )
        assert orphan_id not in [r.chunk_id for r in results] and len(results) == 3
        assert all(r.document_uri for r in results)
    finally:
        await own.close()


async def add_orphan(store, text: str, vector) -> str:
    """A chunk whose document row is absent, as a crash between the two writes leaves one."""
    import uuid

    import pyarrow as pa

    from haiku.core.store.schema import chunks_schema

    row = {
        "id": str(uuid.uuid4()),
        "document_id": str(uuid.uuid4()),
        "chunk_order": 0,
        "content": text,
        "search_text": text,
        "headings": [],
        "page_numbers": [],
        "metadata": "{}",
        "vector": vector,
    }
    await store.table("chunks").add(pa.Table.from_pylist([row], schema=chunks_schema(store.vector_dim)))
    return row["id"]


async def test_search_with_the_real_embedder_finds_the_relevant_chunk(db_config, embedder):
    config = db_config("papers")
    store = await Store.open(DatabaseScope.resolve(config).databases[0], config, create=True)
    try:
        texts = [
            "The heart pumps blood through arteries.",
            "Volcanoes erupt molten lava.",
            "Compilers translate code.",
        ]
        vectors = await embedder.embed_documents(texts)
        await store.writer().documents.upsert_document(
            Document(uri="file:///x.md"), [Chunk(content=t, order=i) for i, t in enumerate(texts)], vectors
        )
        query = await embedder.embed_query("How does blood circulate?")
        for kind in ("vector", "hybrid"):
            results = await store.search("blood circulation", query_vector=query, search_type=kind, limit=1)
            assert results[0].content == texts[0], kind
    finally:
        await store.close()


# --- context expansion ----------------------------------------------------------------------------


async def test_expand_context_grows_results_with_neighbours_and_merges_overlaps(db_config, fake_embed):
    config = db_config("papers")
    store = await Store.open(DatabaseScope.resolve(config).databases[0], config, create=True)
    try:
        texts = [f"c{i} " + "x" * 8 for i in range(6)]  # 11 characters each
        doc = await store.writer().documents.upsert_document(
            Document(uri="file:///long.md"),
            [Chunk(content=t, order=i, page_numbers=[i + 1]) for i, t in enumerate(texts)],
            [fake_embed(t) for t in texts],
        )
        chunks = await store.reads.get_chunks(doc.id)
        hits = [
            SearchResult(content=chunks[1].content, score=0.9, chunk_id=chunks[1].id, document_id=doc.id),
            SearchResult(content=chunks[2].content, score=0.5, chunk_id=chunks[2].id, document_id=doc.id),
            SearchResult(content=chunks[5].content, score=0.7, chunk_id=chunks[5].id, document_id=doc.id),
        ]
        expanded = await store.expand_context(hits, max_chars=24)  # room for one neighbour each
        assert [r.score for r in expanded] == [0.9, 0.7]
        merged, tail = expanded
        assert merged.chunk_id == chunks[1].id
        assert merged.chunk_ids == [chunks[i].id for i in (1, 2, 3)]
        assert merged.content == "\n\n".join(texts[1:4])
        assert merged.page_numbers == [2, 3, 4]
        assert tail.chunk_ids == [chunks[4].id, chunks[5].id]
    finally:
        await store.close()


def test_expansion_with_no_budget_keeps_results_in_score_order_ties_in_input_order():
    results = [
        SearchResult(content="a", score=0.5, chunk_id="a"),
        SearchResult(content="b", score=0.9, chunk_id="b"),
        SearchResult(content="c", score=0.5, chunk_id="c"),
    ]
    assert [r.chunk_id for r in expand_results(results, {}, 0)] == ["b", "a", "c"]
