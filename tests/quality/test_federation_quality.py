"""Federation loses nothing: one corpus split over three databases ranks like one database.

The fixture corpus (tests/quality/fixture_corpus.py) is written once into one
database and once split over three; every query runs through ``HaikuRAG.search``
on both and the top-10 documents are compared.

Hybrid threshold. Over one database and over three, the default fusion (rrf)
fuses the same global vector list (cosine is comparable across databases, so
the merged list equals the one-database list) with a global full-text list
merged by BM25. Only the full-text list can differ: each database scores BM25
with its own document frequencies and lengths, and with ~15 documents a
database these statistics move far more than on a real corpus (SciFact split
over 10 databases keeps nDCG@10 within 0.005; docs/fusion.md). On this fixture
the measured mean overlap is HYBRID_MEASURED; the threshold leaves room for a
different BLAS or LanceDB tie order, and stays well above the seeds' cosine
rule, which re-sorts every hybrid candidate by vector similarity and so throws
away what full-text retrieval added (measured COSINE_MEASURED; the last test
keeps the threshold honest by checking that this rule fails it).
"""

from __future__ import annotations

import pytest
from bench.metrics import overlap_at_k
from fixture_corpus import QUERIES

HYBRID_OVERLAP_THRESHOLD = 0.9
TOP = 10


async def _top_ids(config, search_type: str) -> list[list[str]]:
    from haiku.rag.client import HaikuRAG

    async with HaikuRAG(config=config, read_only=True) as client:
        out = []
        for query in QUERIES:
            results = await client.search(query, limit=TOP, search_type=search_type)
            out.append([r.document_uri for r in results])
        return out


async def _mean_overlap(federation_fixture, search_type: str, fusion: str = "rrf") -> float:
    one = await _top_ids(federation_fixture("one"), search_type)
    three = await _top_ids(federation_fixture("three", fusion), search_type)
    mean = sum(overlap_at_k(a, b, TOP) for a, b in zip(one, three, strict=True)) / len(QUERIES)
    print(f"MEASURE {search_type} {fusion} {mean:.4f}")
    return mean


async def test_vector_search_over_three_databases_returns_the_one_database_top_10(federation_fixture):
    one = await _top_ids(federation_fixture("one"), "vector")
    three = await _top_ids(federation_fixture("three"), "vector")
    assert three == one


async def test_hybrid_search_over_three_databases_keeps_the_one_database_top_10(federation_fixture):
    assert await _mean_overlap(federation_fixture, "hybrid") >= HYBRID_OVERLAP_THRESHOLD


async def test_the_seeds_cosine_rule_for_hybrid_falls_below_the_overlap_threshold(federation_fixture):
    # Not a behaviour to keep: evidence that the threshold above can fail.
    assert await _mean_overlap(federation_fixture, "hybrid", fusion="cosine") < HYBRID_OVERLAP_THRESHOLD


@pytest.mark.parametrize("search_type", ["vector", "hybrid"])
async def test_every_query_finds_ten_documents_in_both_layouts(federation_fixture, search_type):
    # Guards the comparisons above against passing on empty or short lists.
    for layout in ("one", "three"):
        tops = await _top_ids(federation_fixture(layout), search_type)
        assert [len(set(top)) for top in tops] == [TOP] * len(QUERIES)
