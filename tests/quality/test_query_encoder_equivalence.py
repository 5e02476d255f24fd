"""The ONNX query encoder changes no result: same ranked ids, scores within 1e-5 of torch's.

The databases hold vectors from the torch encoder (the ingester's); each query
of the fixture corpus is searched once with the query embedded by torch
(``embeddings.query_runtime: torch``, the path every search took before) and
once by the exported ONNX model (``onnx``), over one database and over three.

Vector search is where the query vector decides everything, so it is compared
exactly. Hybrid search is not compared whole: its full-text list orders equal
BM25 scores differently from one run to the next (with the torch encoder too),
which moves reciprocal-rank scores; its vector list is the one compared here.
"""

from __future__ import annotations

import pytest
from fixture_corpus import QUERIES

from haiku.rag.client import HaikuRAG

SCORE_TOLERANCE = 1e-5


async def _ranked(config, query: str, search_type: str) -> list[tuple[str, str, float]]:
    async with HaikuRAG(config=config, read_only=True) as client:
        results = await client.search(query, limit=10, search_type=search_type)
    return [(r.source or "", r.chunk_id or "", r.score) for r in results]


@pytest.mark.parametrize("layout", ["one", "three"])
async def test_onnx_query_vectors_rank_and_score_like_torch(federation_fixture, layout):
    search_type = "vector"
    torch_config = federation_fixture(layout)
    torch_config.embeddings.query_runtime = "torch"
    onnx_config = federation_fixture(layout)
    onnx_config.embeddings.query_runtime = "onnx"
    for query in QUERIES:
        expected = await _ranked(torch_config, query, search_type)
        got = await _ranked(onnx_config, query, search_type)
        assert [(db, chunk) for db, chunk, _ in got] == [(db, chunk) for db, chunk, _ in expected], query
        for (_, _, score), (_, _, want) in zip(got, expected, strict=True):
            assert score == pytest.approx(want, abs=SCORE_TOLERANCE), query
