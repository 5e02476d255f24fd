"""One database's hybrid search answers alike through the store and through the client (docs/fusion.md).

Both fuse with ``haiku.core.fusion.fuse_rrf`` at ``hybrid_depth(limit)``: the
store over its own two lists, the client over one pair per database.
"""

from __future__ import annotations

import pytest
from rag_support import build_config

from haiku.core.embedders import get_embedder
from haiku.core.scope import DatabaseRef
from haiku.core.store import Store
from haiku.rag.client import HaikuRAG

# Queries whose best full-text hits sit below the top of the vector list, where
# the depth of the two lists decides the fused order.
QUERIES = ("learning from data", "neural light", "networks data plants", "representations of light")


@pytest.mark.parametrize("metric", ["cosine", "l2"])
async def test_one_databases_hybrid_search_is_the_same_through_the_store_and_the_client(built, tmp_path, metric):
    config = build_config(tmp_path / "data", {"papers": str(built["papers"])}, search={"vector_index_metric": metric})
    encoder = get_embedder(config)
    through_store, through_client = [], []
    store = await Store.open(DatabaseRef.configured("papers", built["papers"]), config, read_only=True)
    try:
        for query in QUERIES:
            vector = await encoder.embed_query(query)
            for limit in (1, 2, 3):
                results = await store.search(query, query_vector=vector, search_type="hybrid", limit=limit)
                through_store.append([(r.chunk_id, r.source, r.score) for r in results])
    finally:
        await store.close()
    async with HaikuRAG(config=config) as client:
        for query in QUERIES:
            for limit in (1, 2, 3):
                results = await client.search(query, limit=limit, search_type="hybrid")
                through_client.append([(r.chunk_id, r.source, r.score) for r in results])
    assert through_store == through_client
