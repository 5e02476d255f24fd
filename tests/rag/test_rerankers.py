"""Rerankers score the union of every selected database's candidates (docs/fusion.md).

No cross-encoder weights ship offline, so the cross-encoder test builds a tiny
random-weight BERT classifier with the MiniLM tokenizer and saves it locally;
the HTTP test runs a real /rerank server on 127.0.0.1.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from rag_support import build_config

from haiku.rag.client import HaikuRAG

QUERY = "learning from data"


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from haiku.core.embedders import local_model_path

    path = tmp_path_factory.mktemp("tiny-cross-encoder")
    tokenizer = AutoTokenizer.from_pretrained(local_model_path(), local_files_only=True)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=2, intermediate_size=64, num_labels=1,
    )
    torch.manual_seed(0)
    BertForSequenceClassification(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


class _RerankHandler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
        words = set(body["query"].lower().split())
        scores = [len(words & set(doc.lower().rstrip(".").split())) + i / 1000 for i, doc in enumerate(body["documents"])]
        results = [{"index": i, "relevance_score": s} for i, s in enumerate(scores)]
        if self.server.bad_index:
            results.append({"index": len(scores) + 5, "relevance_score": 99.0})
        results.sort(key=lambda r: -r["relevance_score"])
        payload = json.dumps({"results": results[: body["top_n"]]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def rerank_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _RerankHandler)
    server.requests = []
    server.bad_index = False
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _config(tmp_path, built, model):
    return build_config(
        tmp_path / "data", {"papers": str(built["papers"]), "wiki": str(built["wiki"])}, reranking={"model": model}
    )


async def test_http_reranker_scores_the_union_once_and_results_keep_their_source(built, tmp_path, rerank_server):
    port = rerank_server.server_address[1]
    model = {"provider": "http", "name": "tiny", "base_url": f"http://127.0.0.1:{port}/v1", "api_key": "k"}
    async with HaikuRAG(config=_config(tmp_path, built, model)) as client:
        results = await client.search(QUERY, limit=3, search_type="vector")
        all_chunks = await client.search("x", limit=50, search_type="vector", sources=["papers"])
        all_chunks += await client.search("x", limit=50, search_type="vector", sources=["wiki"])
    first = rerank_server.requests[0]
    assert first["path"] == "/v1/rerank" and first["auth"] == "Bearer k" and first["top_n"] == 3
    assert sorted(first["documents"]) == sorted(r.content for r in all_chunks)
    assert len(results) == 3
    assert results[0].content == "Machine learning builds models that learn from data."
    assert results[0].source == "wiki"
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)
    by_content = {c.content: c.source for c in all_chunks}
    assert all(by_content[r.content] == r.source for r in results)


async def test_a_reranker_answering_with_a_candidate_it_was_not_given_is_a_value_error(built, tmp_path, rerank_server):
    rerank_server.bad_index = True
    port = rerank_server.server_address[1]
    model = {"provider": "http", "name": "tiny", "base_url": f"http://127.0.0.1:{port}"}
    async with HaikuRAG(config=_config(tmp_path, built, model)) as client:
        with pytest.raises(ValueError, match="not given"):
            await client.search(QUERY, limit=50, search_type="vector")


async def test_cross_encoder_reranks_with_the_local_model(built, tmp_path, tiny_cross_encoder):
    from sentence_transformers import CrossEncoder

    model = {"provider": "cross-encoder", "name": str(tiny_cross_encoder)}
    async with HaikuRAG(config=_config(tmp_path, built, model)) as client:
        results = await client.search(QUERY, limit=4, search_type="vector")
    expected = CrossEncoder(str(tiny_cross_encoder), device="cpu").predict(
        [(QUERY, r.content) for r in results], show_progress_bar=False
    )
    assert [r.score for r in results] == pytest.approx([float(s) for s in expected], abs=1e-5)
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)
    assert {r.source for r in results} <= {"papers", "wiki"}


async def test_the_reranker_is_built_once_per_client_shared_by_borrowed_clients_and_closed_once(built, tmp_path, monkeypatch):
    made: list = []

    class Stub:
        def __init__(self):
            self.calls: list[list[str]] = []
            self.closed = 0

        async def rerank(self, query, documents, top_n):
            self.calls.append(list(documents))
            return [(i, float(len(documents) - i)) for i in range(min(top_n, len(documents)))]

        async def aclose(self):
            self.closed += 1

    def create(model):
        made.append(Stub())
        return made[-1]

    monkeypatch.setattr("haiku.rag.rerankers.create_reranker", create)
    model = {"provider": "http", "name": "stub", "base_url": "http://127.0.0.1:9"}
    async with HaikuRAG(config=_config(tmp_path, built, model)) as client:
        assert made == []
        await client.search(QUERY, limit=2)
        papers = await client.reader_for("papers")
        await papers.search(QUERY, limit=2)
        await client.search(QUERY, limit=2, search_type="fts")
    assert len(made) == 1
    stub = made[0]
    assert len(stub.calls) == 3 and stub.closed == 1
