"""A federated search runs at most a few chunk queries at once, with the same results (docs/fusion.md)."""

from __future__ import annotations

import pytest
from rag_support import build_config

from haiku.core.store import search as store_search
from haiku.core.store._query_slots import QuerySlots
from haiku.rag.client import HaikuRAG

QUERY = "learning from data"


async def _searched(config, monkeypatch, slots: int) -> tuple[dict, int]:
    bound = QuerySlots(slots)
    monkeypatch.setattr(store_search, "chunk_queries", bound)
    found = {}
    async with HaikuRAG(config=config, read_only=True) as client:
        for search_type in ("hybrid", "vector", "fts"):
            results = await client.search(QUERY, limit=4, search_type=search_type)
            found[search_type] = [(r.source, r.chunk_id, r.score) for r in results]
    return found, bound.most_in_flight


@pytest.fixture
def four_db(built, tmp_path):
    """papers and wiki, each named twice: a hybrid search runs eight chunk queries."""
    paths = {
        "papers": built["papers"],
        "wiki": built["wiki"],
        "papers2": built["papers"],
        "wiki2": built["wiki"],
    }
    return build_config(tmp_path / "data", {name: str(path) for name, path in paths.items()})


async def test_a_search_over_many_databases_waits_for_a_free_slot_and_finds_the_same(four_db, monkeypatch):
    unbounded, most_unbounded = await _searched(four_db, monkeypatch, 64)
    bounded, most_bounded = await _searched(four_db, monkeypatch, 2)
    assert most_unbounded > 2  # the databases' queries do start together when slots allow
    assert most_bounded == 2
    assert bounded == unbounded
    assert {source for source, _, _ in bounded["hybrid"]} >= {"papers", "wiki"}
