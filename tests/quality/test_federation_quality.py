"""Federation loses nothing: one corpus split over three databases ranks like one database.

The fixture corpus (tests/quality/fixture_corpus.py) is written once into one
database and once split over three; every query runs through ``HaikuRAG.search``
on both and the top-10 documents are compared.

Vector search must agree exactly: cosine is comparable across databases, so
the merged list is the list one database returns.

Hybrid threshold (0.9 mean top-10 overlap). The default fusion (rrf) fuses the
same global vector list with a global full-text list merged by BM25, both cut
at the depth one database returns. Only the full-text list can differ: each
database scores BM25 with the IDF over all three (search.fts_idf: global) but
its own average length, and with 15 documents a database these move far more
than on a real corpus (on SciFact split over 3 and 10 databases hybrid nDCG@10
stays within 0.001 of one database; docs/fusion.md). Measured here: 0.975
(three of the twelve queries differ by one document; 0.95 with each database's
own IDF). The original cosine rule, which re-sorts every hybrid candidate by
vector similarity and so drops what full-text search added, measures 0.81.
0.9 sits between the two with room for another BLAS or LanceDB tie order on
either side, and a test checks the cosine rule still fails it, so the
threshold can tell the rules apart.

Full-text threshold (0.05 mean relative score difference). With the default
``search.fts_idf: global`` each database scores BM25 with the IDF over all three,
so a document's score over three databases differs from its one-database score
only by its database's average chunk length: measured 0.018 mean (0.053 at
most) over the twelve queries. Each database's own IDF (``fts_idf: local``, the
original rule) measures 0.148 mean (0.61 at most). 0.05 sits between the two, and
a test checks the local rule fails it. Top-10 overlap is no measure here:
several queries match fewer than ten documents, and the tails are near-ties.
"""

from __future__ import annotations

import pytest
from bench.metrics import overlap_at_k
from fixture_corpus import QUERIES

HYBRID_OVERLAP_THRESHOLD = 0.9
FTS_SCORE_DIFFERENCE_THRESHOLD = 0.05
TOP = 10


@pytest.fixture(scope="module")
def top_ids(federation_fixture):
    """``await top_ids(layout, search_type, fusion)``: each query's top-10 document uris, computed once."""
    from haiku.rag.client import HaikuRAG

    cache: dict[tuple[str, str, str], list[list[str]]] = {}

    async def get(layout: str, search_type: str, fusion: str = "rrf") -> list[list[str]]:
        key = (layout, search_type, fusion)
        if key not in cache:
            async with HaikuRAG(config=federation_fixture(layout, fusion), read_only=True) as client:
                cache[key] = [
                    [r.document_uri for r in await client.search(q, limit=TOP, search_type=search_type)]
                    for q in QUERIES
                ]
        return cache[key]

    return get


async def _mean_overlap(top_ids, search_type: str, fusion: str = "rrf") -> float:
    one = await top_ids("one", search_type)
    three = await top_ids("three", search_type, fusion)
    return sum(overlap_at_k(a, b, TOP) for a, b in zip(one, three, strict=True)) / len(QUERIES)


async def test_vector_search_over_three_databases_returns_the_one_database_top_10(top_ids):
    assert await top_ids("three", "vector") == await top_ids("one", "vector")


async def test_hybrid_search_over_three_databases_keeps_the_one_database_top_10(top_ids):
    assert await _mean_overlap(top_ids, "hybrid") >= HYBRID_OVERLAP_THRESHOLD


async def test_the_original_cosine_rule_for_hybrid_falls_below_the_overlap_threshold(top_ids):
    # Not a behaviour to keep: evidence that the threshold above can fail.
    assert await _mean_overlap(top_ids, "hybrid", fusion="cosine") < HYBRID_OVERLAP_THRESHOLD


@pytest.mark.parametrize("layout", ["one", "three"])
@pytest.mark.parametrize("search_type", ["vector", "hybrid"])
async def test_every_query_finds_ten_documents(top_ids, layout, search_type):
    # Guards the comparisons above against passing on empty or short lists.
    assert [len(set(top)) for top in await top_ids(layout, search_type)] == [TOP] * len(QUERIES)


@pytest.fixture(scope="module")
def fts_scores(federation_fixture):
    """``await fts_scores(layout, fts_idf)``: each query's top-10 full-text {document uri: score}."""
    from haiku.rag.client import HaikuRAG

    cache: dict[tuple[str, str], list[dict[str, float]]] = {}

    async def get(layout: str, fts_idf: str = "global") -> list[dict[str, float]]:
        if (layout, fts_idf) not in cache:
            config = federation_fixture(layout, fts_idf=fts_idf)
            async with HaikuRAG(config=config, read_only=True) as client:
                cache[layout, fts_idf] = [
                    {r.document_uri: r.score for r in await client.search(q, limit=TOP, search_type="fts")}
                    for q in QUERIES
                ]
        return cache[layout, fts_idf]

    return get


async def _mean_score_difference(fts_scores, fts_idf: str) -> float:
    """Mean of |score over three - score over one| / score over one, over documents both rank."""
    differences = [
        abs(three[uri] - score) / score
        for one, three in zip(await fts_scores("one"), await fts_scores("three", fts_idf), strict=True)
        for uri, score in one.items()
        if uri in three
    ]
    assert len(differences) >= 5 * len(QUERIES)  # the measure covers most of the lists
    return sum(differences) / len(differences)


async def test_fts_over_three_databases_scores_documents_as_one_database_does(fts_scores):
    assert await _mean_score_difference(fts_scores, "global") < FTS_SCORE_DIFFERENCE_THRESHOLD


async def test_each_databases_own_idf_falls_beyond_the_fts_threshold(fts_scores):
    # Not a behaviour to keep: evidence that the threshold above can fail.
    assert await _mean_score_difference(fts_scores, "local") > FTS_SCORE_DIFFERENCE_THRESHOLD
