"""Fusing bare candidates of real databases, then enriching only the survivors
(haiku.core.fusion.survivors and GlobalIdf; docs/client.md, "How results from several
databases are ranked").

Two real LanceDB databases answer full-text queries; the fusion is ``fuse_by_score``.
"""

from __future__ import annotations

import uuid

import pyarrow as pa
import pytest

from haiku.core import fusion
from haiku.core.fusion import GlobalIdf, Ranked, fuse_and_enrich
from haiku.core.scope import DatabaseScope
from haiku.core.store import Store
from haiku.core.store.fulltext import query_words
from haiku.core.store.schema import chunks_schema

QUERY = "volcanic basalt eruption"


@pytest.fixture
async def stores(db_config, write_doc, fake_embed):
    """alpha and beta, two documents each; alpha also holds one orphan chunk matching QUERY best."""
    config = db_config("alpha", "beta")
    opened = [await Store.open(ref, config, create=True) for ref in DatabaseScope.resolve(config).databases]
    alpha, beta = opened
    await write_doc(alpha, "file:///a1.md", "volcanic basalt flows cool slowly")
    await write_doc(alpha, "file:///a2.md", "an eruption of ash")
    await write_doc(beta, "file:///b1.md", "basalt eruption on a volcanic island")
    await write_doc(beta, "file:///b2.md", "bread and flour")
    text = "volcanic basalt eruption volcanic basalt eruption"
    orphan = {
        "id": str(uuid.uuid4()), "document_id": str(uuid.uuid4()), "chunk_order": 0, "content": text,
        "search_text": text, "headings": [], "page_numbers": [], "metadata": "{}", "vector": fake_embed(text),
    }
    # A chunk whose document row is absent, as a write cut short between its two commits leaves one.
    await alpha.table("chunks").add(pa.Table.from_pylist([orphan], schema=chunks_schema(alpha.vector_dim)))
    yield [(0, alpha), (1, beta)], orphan["id"]
    for store in opened:
        await store.close()


async def _fuse(members, limit, fetched):
    async def fetch(store, checked):
        fetched.append((store.name, checked))
        return await store.search(QUERY, search_type="fts", limit=limit, enrich=checked)

    async def fuse(lists):
        return fusion.fuse_by_score([Ranked(order, lists[order]) for order in sorted(lists)], limit)

    return await fuse_and_enrich(members, fetch, fuse)


async def test_an_orphan_survivor_is_dropped_and_only_its_database_is_asked_again_checked(stores):
    members, orphan_id = stores
    fetched: list[tuple[str | None, bool]] = []
    results = await _fuse(members, 3, fetched)
    assert orphan_id not in [r.chunk_id for r in results]
    assert len(results) == 3  # refilled past the orphan
    assert all(r.document_title for r in results)
    assert sorted(fetched) == [("alpha", False), ("alpha", True), ("beta", False)]


async def test_survivors_rank_as_if_the_orphan_had_been_skipped_before_fusion(stores):
    members, _ = stores
    results = await _fuse(members, 3, [])
    checked = [await store.search(QUERY, search_type="fts", limit=3, enrich=True) for _, store in members]
    expected = fusion.fuse_by_score([Ranked(order, found) for (order, _), found in zip(members, checked, strict=True)], 3)
    assert [(r.source, r.chunk_id, r.score) for r in results] == [(r.source, r.chunk_id, r.score) for r in expected]


async def test_global_idf_gives_each_database_the_factors_of_the_summed_statistics(stores):
    members, _ = stores
    words = query_words(QUERY)
    statistics = [await store.fts_statistics(words) for _, store in members]
    async with GlobalIdf(words, members, enabled=True) as idf:
        factors = [await idf.for_store(store) for _, store in members]
    assert factors == fusion.global_idf_boosts(statistics)
    assert factors[0] != factors[1]


async def test_global_idf_computes_nothing_when_disabled_or_over_one_database(stores):
    members, _ = stores
    async with GlobalIdf(["basalt"], members, enabled=False) as off, GlobalIdf(["basalt"], members[:1], enabled=True) as one:
        assert off.for_store(members[0][1]) is None
        assert one.for_store(members[0][1]) is None
