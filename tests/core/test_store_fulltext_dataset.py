"""Full-text queries on the Lance dataset under the table: the table's rows and scores (docs/storage.md)."""

from __future__ import annotations

import sys

import pytest

from haiku.core.models import Chunk, Document
from haiku.core.scope import DatabaseScope
from haiku.core.store import Store

TEXTS = [
    "cells divide by mitosis", "proteins fold into shapes", "stars fuse hydrogen into helium",
    "planets orbit stars", "bread needs yeast and flour", "soup simmers slowly", "stars and bread",
]  # fmt: skip


@pytest.fixture
async def store(tmp_path, fake_embed):
    from haiku.core.config import config_from_dict

    config = config_from_dict(
        {"storage": {"data_dir": str(tmp_path)}, "lancedb": {"databases": {"papers": str(tmp_path / "p.lancedb")}}}
    )
    opened = await Store.open(DatabaseScope.resolve(config).databases[0], config, create=True)
    for i, text in enumerate(TEXTS):
        document = Document(uri=f"file:///{i}.md", title=f"t{i}", content=text)
        await opened.writer().documents.upsert_document(document, [Chunk(content=text, order=0)], [fake_embed(text)])
    yield opened
    await opened.close()


def _rows(results):
    return [(r.chunk_id, r.content, r.score) for r in results]


@pytest.mark.parametrize("boosts", [None, {"stars": 1.5, "bread": 0.5}])
async def test_the_dataset_path_gives_the_tables_rows_order_and_scores(store, boosts):
    text_dataset = store.searcher.text_dataset
    kwargs = {} if boosts is None else {"boosts": boosts}
    from_table = await store.fts_candidates("stars bread", limit=5, **kwargs)
    assert text_dataset._held is None  # the first query of a version prepares nothing
    await store.fts_candidates("stars bread", limit=5, **kwargs)
    assert text_dataset._held is not None and "lance" in sys.modules
    from_dataset = await store.fts_candidates("stars bread", limit=5, **kwargs)
    assert _rows(from_dataset) == _rows(from_table) and len(from_table) >= 3


async def test_a_new_version_drops_the_prepared_handle(store, fake_embed):
    for _ in range(2):
        await store.fts_candidates("stars", limit=3)
    assert store.searcher.text_dataset._held is not None
    await store.writer().documents.upsert_document(
        Document(uri="file:///new.md", title="new", content="stars again"), [Chunk(content="stars again", order=0)],
        [fake_embed("stars again")],
    )  # fmt: skip
    found = await store.fts_candidates("again", limit=3)
    assert found[0].content == "stars again" and store.searcher.text_dataset._held is None


@pytest.mark.parametrize("boosts", [None, {"stars": 1.5, "bread": 0.5}])
async def test_rows_held_in_memory_answer_as_the_table_does(store, boosts):
    kwargs = {} if boosts is None else {"boosts": boosts}
    from_table = await store.fts_candidates("stars bread", limit=5, **kwargs)
    with_vectors = await store.fts_candidates("stars bread", limit=5, with_vectors=True, **kwargs)
    assert store.searcher.memory._loaded is None  # held from the third query of a version on
    from_memory = await store.fts_candidates("stars bread", limit=5, **kwargs)
    assert store.searcher.memory._loaded is not None
    assert _rows(from_memory) == _rows(from_table)
    from_memory = await store.fts_candidates("stars bread", limit=5, with_vectors=True, **kwargs)
    assert [r.vector for r in from_memory] == [r.vector for r in with_vectors]
