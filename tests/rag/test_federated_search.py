"""Federated search over real databases (docs/fusion.md)."""

from __future__ import annotations

import itertools
import math
import re
import warnings
from collections import Counter

import numpy as np
import pytest
from rag_support import build_config

from haiku.core.errors import ConfigMismatchError, UnknownDatabaseError
from haiku.core.store import Store
from haiku.core.store.reads import Reads
from haiku.rag.client import HaikuRAG
from support import copy_database

QUERY = "learning from data"


async def _cosines(client, results, query_vector):
    """Cosine of each result's stored vector to the query vector."""
    q = np.asarray(query_vector)
    out = []
    for r in results:
        reader = await client.reader_for(r.source)
        chunk = await reader.store.reads.get_chunk_by_id(r.chunk_id, with_vector=True)
        v = np.asarray(chunk.vector)
        out.append(float(v @ q / (np.linalg.norm(v) * np.linalg.norm(q))))
    return out


async def test_empty_sources_return_nothing_and_open_nothing(two_db, built, tmp_path, open_log):
    async with HaikuRAG(config=two_db) as client:
        assert await client.search(QUERY, sources=[]) == []
        assert open_log == []
    single = build_config(tmp_path / "one", {"papers": str(built["papers"])})
    async with HaikuRAG(config=single) as client:
        opened_on_enter = list(open_log)
        assert await client.search(QUERY, sources=[]) == []
        assert open_log == opened_on_enter


async def test_unknown_sources_raise_before_anything_opens(two_db, open_log):
    async with HaikuRAG(config=two_db) as client:
        with pytest.raises(UnknownDatabaseError, match="nope"):
            await client.search(QUERY, sources=["nope"])
        with pytest.raises(UnknownDatabaseError, match="nope"):
            await client.search(QUERY, sources=["papers", "nope"])
    assert open_log == []


async def test_search_over_two_databases_returns_results_from_both_each_with_its_source(two_db, built):
    async with HaikuRAG(config=two_db) as client:
        results = await client.search(QUERY, limit=5)
    assert {r.source for r in results} == {"papers", "wiki"}
    titles = {"papers": set(built["papers_docs"]), "wiki": set(built["wiki_docs"])}
    assert all(r.document_title in titles[r.source] for r in results)


@pytest.fixture
def other_model_pair(built, wiki_other_model, tmp_path):
    return build_config(tmp_path / "data", {"papers": str(built["papers"]), "wiki": str(wiki_other_model)})


@pytest.mark.parametrize("search_type", ["vector", "hybrid"])
async def test_different_embedders_refuse_vector_and_hybrid_even_read_only(other_model_pair, search_type):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        async with HaikuRAG(config=other_model_pair, read_only=True) as client:
            with pytest.raises(ConfigMismatchError, match="different embedders"):
                await client.search(QUERY, search_type=search_type)


async def test_different_embedders_allow_fts_over_both_and_any_search_over_one(other_model_pair):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        async with HaikuRAG(config=other_model_pair, read_only=True) as client:
            assert {r.source for r in await client.search("data", search_type="fts")} == {"papers", "wiki"}
            assert await client.search(QUERY, sources=["wiki"])
            assert await client.search(QUERY, sources=["papers"], search_type="vector")


async def test_a_recorded_dimension_unlike_the_config_refuses_to_open_even_read_only(wiki_other_dim, tmp_path):
    with pytest.raises(ConfigMismatchError, match="512"):
        async with HaikuRAG(db_path=wiki_other_dim, config=build_config(tmp_path / "data"), read_only=True):
            pass


async def test_a_model_change_at_the_same_dimension_warns_read_only_and_refuses_writable(wiki_other_model, tmp_path):
    from haiku.core.embedders import EmbedderDriftWarning

    config = build_config(tmp_path / "data")
    with pytest.warns(EmbedderDriftWarning, match="other-model"):
        async with HaikuRAG(db_path=wiki_other_model, config=config, read_only=True) as client:
            assert await client.search("pasta", search_type="vector")
    with pytest.raises(ConfigMismatchError, match="other-model"):
        async with HaikuRAG(db_path=wiki_other_model, config=config):
            pass


@pytest.mark.parametrize(
    ("search_type", "metric"), [("vector", "cosine"), ("vector", "l2"), ("hybrid", "cosine")]
)
async def test_cosine_fusion_orders_by_cosine_and_scores_with_it(built, tmp_path, embedder, search_type, metric):
    config = build_config(
        tmp_path / "data",
        {"papers": str(built["papers"]), "wiki": str(built["wiki"])},
        search={"fusion": "cosine", "vector_index_metric": metric},
    )
    query_vector = await embedder.embed_query(QUERY)
    async with HaikuRAG(config=config) as client:
        results = await client.search(QUERY, limit=6, search_type=search_type)
        cosines = await _cosines(client, results, query_vector)
    assert len(results) == 6
    assert [r.score for r in results] == pytest.approx(cosines, abs=1e-5)
    assert all(a >= b for a, b in itertools.pairwise(cosines))


async def test_full_ties_fall_to_configured_order_whatever_the_order_of_sources(built, tmp_path):
    twin = copy_database(built["papers"], tmp_path / "twin.lancedb")
    config = build_config(tmp_path / "data", {"a": str(built["papers"]), "b": str(twin)})
    async with HaikuRAG(config=config) as client:
        results = await client.search(QUERY, limit=4, search_type="vector", sources=["b", "a"])
    assert [r.source for r in results] == ["a", "b", "a", "b"]
    assert results[0].chunk_id == results[1].chunk_id and results[2].chunk_id == results[3].chunk_id


async def test_federated_fts_is_ordered_by_each_databases_retrieval_score(built, tmp_path):
    # search.fts_idf: local merges each database's own BM25 (docs/fusion.md#the-rules).
    databases = {"papers": str(built["papers"]), "wiki": str(built["wiki"])}
    config = build_config(tmp_path / "data", databases, search={"fts_idf": "local"})
    async with HaikuRAG(config=config) as client:
        results = await client.search("data", limit=10, search_type="fts")
    assert {r.source for r in results} == {"papers", "wiki"}
    scores = [r.score for r in results]
    assert scores == sorted(scores, reverse=True)
    async with HaikuRAG(db_path=built["wiki"], config=build_config(tmp_path / "solo"), read_only=True) as wiki:
        native = {r.chunk_id: r.score for r in await wiki.search("data", limit=10, search_type="fts")}
    assert all(r.score == pytest.approx(native[r.chunk_id]) for r in results if r.source == "wiki")


def _bm25_idf(df: int, n: int) -> float:
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


async def _chunks_holding(path, word: str, tmp_path) -> tuple[int, int]:
    """(chunks, chunks containing ``word`` as a whole word), read through the client, not the index."""
    async with HaikuRAG(db_path=path, config=build_config(tmp_path / "count"), read_only=True) as client:
        store = client.store
        texts = [c.content for doc in await client.list_documents() for c in await store.reads.get_chunks(doc.id)]
    return len(texts), sum(1 for text in texts if word in re.findall(r"\w+", text.lower()))


async def test_federated_fts_scores_use_the_idf_over_every_database_searched(two_db, built, tmp_path):
    """Default fts_idf: global. Each database's BM25 of a one-word query is rescaled from its own
    IDF to the IDF over both databases' chunks, so the scores are comparable, still non-increasing."""
    async with HaikuRAG(config=two_db) as client:
        results = await client.search("data", limit=10, search_type="fts")
    assert {r.source for r in results} == {"papers", "wiki"}
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)
    counts = {name: await _chunks_holding(built[name], "data", tmp_path) for name in ("papers", "wiki")}
    total_n = sum(n for n, _ in counts.values())
    total_df = sum(df for _, df in counts.values())
    for name in ("papers", "wiki"):
        n, df = counts[name]
        factor = _bm25_idf(total_df, total_n) / _bm25_idf(df, n)
        async with HaikuRAG(db_path=built[name], config=build_config(tmp_path / name), read_only=True) as solo:
            native = {r.chunk_id: r.score for r in await solo.search("data", limit=10, search_type="fts")}
        assert factor != pytest.approx(1.0, abs=1e-3)  # else this test could not tell the rules apart
        assert [r.score for r in results if r.source == name] == pytest.approx(
            [native[r.chunk_id] * factor for r in results if r.source == name], rel=1e-4
        )


async def test_rrf_hybrid_keeps_the_full_text_signal_across_databases(two_db):
    """The default fusion: a chunk both lists rank first beats one only the vector list likes."""
    async with HaikuRAG(config=two_db) as client:
        results = await client.search("Chlorophyll absorbs red and blue light", limit=3)
    assert results[0].source == "papers" and "Chlorophyll" in results[0].content
    assert results[0].score == pytest.approx(2 / 61)


async def test_one_database_holding_every_relevant_chunk_may_fill_every_slot(two_db):
    async with HaikuRAG(config=two_db) as client:
        results = await client.search("photosynthesis chlorophyll light plants", limit=2, search_type="vector")
    assert [r.source for r in results] == ["papers", "papers"]


@pytest.mark.parametrize("search_type", ["vector", "fts", "hybrid"])
async def test_one_source_of_a_set_matches_a_client_on_that_database(two_db, built, tmp_path, search_type):
    async with HaikuRAG(config=two_db) as client:
        from_set = await client.search(QUERY, limit=4, search_type=search_type, sources=["papers"])
    single = build_config(tmp_path / "one", {"papers": str(built["papers"])})
    async with HaikuRAG(config=single) as client:
        alone = await client.search(QUERY, limit=4, search_type=search_type)
    assert [(r.chunk_id, r.source) for r in from_set] == [(r.chunk_id, r.source) for r in alone]
    assert [r.score for r in from_set] == pytest.approx([r.score for r in alone])


async def test_each_database_is_asked_for_limit_or_limit_times_pool_with_a_reranker(two_db, built, tmp_path, monkeypatch):
    asked: list[tuple[str, int]] = []
    calls: list[tuple[str, str, int]] = []
    for method in ("vector_candidates", "fts_candidates", "hybrid_candidates"):
        original = getattr(Store, method)

        def spy(self, *args, _original=original, _method=method, **kwargs):
            asked.append((self.name, kwargs["limit"]))
            calls.append((_method, self.name, kwargs["limit"]))
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(Store, method, spy)

    async with HaikuRAG(config=two_db) as client:
        for search_type in ("vector", "fts", "hybrid"):
            await client.search(QUERY, limit=3, search_type=search_type)
    assert sorted(set(asked)) == [("papers", 3), ("wiki", 3)] and len(asked) == 6

    class Stub:
        async def rerank(self, query, documents, top_n):
            return [(i, 1.0 / (i + 1)) for i in range(min(top_n, len(documents)))]

        async def aclose(self):
            pass

    monkeypatch.setattr("haiku.rag.rerankers.create_reranker", lambda model: Stub())
    reranked = build_config(
        tmp_path / "rr", {"papers": str(built["papers"]), "wiki": str(built["wiki"])},
        reranking={"model": {"provider": "http", "name": "stub", "base_url": "http://127.0.0.1:9"}},
    )
    calls.clear()
    async with HaikuRAG(config=reranked) as client:
        await client.search(QUERY, limit=3)
    # (each database's own hybrid reads its two lists at that depth, as one database in a set would)
    assert sorted(calls) == [("hybrid_candidates", "papers", 30), ("hybrid_candidates", "wiki", 30)]


async def test_a_federated_search_reads_document_rows_once_per_database_for_its_survivors_only(two_db, monkeypatch):
    read: list[tuple[str | None, set[str]]] = []
    original = Reads.document_rows

    async def spy(self, ids, **kwargs):
        ids = list(ids)
        read.append((self.handles.name, set(ids)))
        return await original(self, ids, **kwargs)

    monkeypatch.setattr(Reads, "document_rows", spy)
    async with HaikuRAG(config=two_db) as client:
        for search_type in ("vector", "fts", "hybrid"):
            read.clear()
            # Four of the eight chunks survive: some candidates do not, and one database
            # holds two survivors or more, so one read per survivor would show.
            results = await client.search("learning from data, light and lava", limit=4, search_type=search_type)
            assert len(results) == 4 and max(Counter(r.source for r in results).values()) >= 2
            assert {(name, i) for name, ids in read for i in ids} == {(r.source, r.document_id) for r in results}
            assert sorted(name for name, _ in read) == sorted({r.source for r in results}), search_type
            assert all(r.document_title for r in results)


async def test_an_orphan_among_federated_survivors_is_dropped_and_the_ranking_is_as_without_it(
    built, tmp_path, embedder
):
    import uuid

    import pyarrow as pa

    from haiku.core.scope import DatabaseRef
    from haiku.core.store.schema import chunks_schema

    papers = copy_database(built["papers"], tmp_path / "papers.lancedb")
    config = build_config(tmp_path / "data", {"papers": str(papers), "wiki": str(built["wiki"])})
    ref = DatabaseRef.configured("papers", papers)
    orphan = {
        "id": str(uuid.uuid4()), "document_id": str(uuid.uuid4()), "chunk_order": 0, "content": QUERY,
        "search_text": QUERY, "headings": [], "page_numbers": [], "metadata": "{}",
        "vector": (await embedder.embed_documents([QUERY]))[0],
    }
    store = await Store.open(ref, config)
    try:  # a chunk whose document row is absent, as a crash between the two writes leaves one
        await store.table("chunks").add(pa.Table.from_pylist([orphan], schema=chunks_schema(store.vector_dim)))
    finally:
        await store.close()
    kinds = ("vector", "fts", "hybrid")
    async with HaikuRAG(config=config) as client:
        with_orphan = {kind: await client.search(QUERY, limit=3, search_type=kind) for kind in kinds}
    store = await Store.open(ref, config)
    try:
        assert await store.writer().orphans.remove_orphan_chunks() == 1
    finally:
        await store.close()
    async with HaikuRAG(config=config) as client:
        without = await client.search(QUERY, limit=3, search_type="vector")

    assert all(orphan["id"] not in [r.chunk_id for r in with_orphan[kind]] for kind in kinds)
    assert len(with_orphan["vector"]) == len(with_orphan["hybrid"]) == 3  # refilled past the orphan
    assert [(r.source, r.chunk_id) for r in with_orphan["vector"]] == [(r.source, r.chunk_id) for r in without]
    assert [r.score for r in with_orphan["vector"]] == pytest.approx([r.score for r in without])
