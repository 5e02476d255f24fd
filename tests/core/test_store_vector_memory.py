"""Small databases' vectors in memory: the flat scan's results by matrix product (docs/storage.md#vectors-in-memory)."""

from __future__ import annotations

import pytest

from haiku.core.models import Chunk, Document
from haiku.core.scope import DatabaseScope
from haiku.core.store import Store
from haiku.core.store.vector_memory import BUDGET

TEXTS = [
    "cells divide by mitosis", "proteins fold into shapes", "stars fuse hydrogen into helium",
    "planets orbit stars", "bread needs yeast and flour", "soup simmers slowly", "rivers carve valleys",
]  # fmt: skip


async def _store(root, fake_embed, **search):
    from haiku.core.config import config_from_dict

    config = config_from_dict(
        {
            "storage": {"data_dir": str(root)},
            "lancedb": {"databases": {"papers": str(root / "papers.lancedb")}},
            "search": search,
        }
    )
    store = await Store.open(DatabaseScope.resolve(config).databases[0], config, create=True)
    for i, text in enumerate(TEXTS):
        document = Document(uri=f"file:///{i}.md", title=f"t{i}", content=text)
        await store.writer().documents.upsert_document(document, [Chunk(content=text, order=0)], [fake_embed(text)])
    return store


def _rows(results):
    return [(r.chunk_id, r.content, r.vector) for r in results]


@pytest.mark.parametrize("metric", ["cosine", "l2"])
async def test_memory_search_gives_the_flat_scans_ids_order_and_scores(tmp_path, fake_embed, metric):
    store = await _store(tmp_path, fake_embed, vector_index_metric=metric)
    try:
        memory = store.searcher.memory
        for text in ["stars and planets", "yeast bread", "mitosis of cells", "valleys"]:
            query = fake_embed(text)
            engine = await store.vector_candidates(query, limit=4, with_vectors=True)
            if memory._loaded is None:  # the first query of a version loads nothing
                await store.vector_candidates(query, limit=4)
            assert memory._loaded is not None
            from_memory = await store.vector_candidates(query, limit=4, with_vectors=True)
            assert _rows(from_memory) == _rows(engine)
            assert [r.score for r in from_memory] == pytest.approx([r.score for r in engine], abs=1e-6)
            memory._loaded.release()
            memory._loaded = None
    finally:
        await store.close()


async def test_the_first_query_of_a_version_loads_nothing_and_a_new_version_drops_the_matrix(tmp_path, fake_embed):
    store = await _store(tmp_path, fake_embed)
    try:
        memory = store.searcher.memory
        query = fake_embed("stars")
        await store.vector_candidates(query, limit=3)
        assert memory._loaded is None
        await store.vector_candidates(query, limit=3)
        held = memory._loaded
        assert held is not None and held.matrix.shape == (len(TEXTS), store.handles.vector_dim)
        await store.writer().documents.upsert_document(
            Document(uri="file:///new.md", title="new", content="comets"), [Chunk(content="comets", order=0)],
            [fake_embed("comets")],
        )  # fmt: skip
        found = await store.vector_candidates(fake_embed("comets"), limit=1)
        assert found[0].content == "comets" and memory._loaded is None  # the new version's first query
    finally:
        await store.close()


async def test_a_zero_budget_keeps_every_query_on_the_engine(tmp_path, fake_embed):
    store = await _store(tmp_path, fake_embed, memory_vectors_mb=0)
    try:
        before = BUDGET.used
        for _ in range(3):
            await store.vector_candidates(fake_embed("stars"), limit=3)
        assert store.searcher.memory._loaded is None and BUDGET.used == before
    finally:
        await store.close()
