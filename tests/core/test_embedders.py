"""Embedders and the embedder-identity checks (docs/configuration.md).

The local model is the real all-MiniLM-L6-v2 (session fixture ``embedder``);
the OpenAI-compatible embedder talks to a real HTTP server on 127.0.0.1.
"""

from __future__ import annotations

import json
import math
import re
import socket
import threading
import warnings
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from haiku.core.config import EmbeddingModelConfig, EmbeddingsConfig
from haiku.core.embedders import (
    EmbedderDriftWarning,
    EmbedderIdentity,
    EmbeddingError,
    check_identity_on_open,
    check_selection_identities,
    get_embedder,
    local_model_path,
)
from haiku.core.embedders.lean import plain_layout
from haiku.core.errors import ConfigMismatchError
from haiku.ingester.cli_hints import error_text as ingester_text
from haiku.rag.cli._hints import error_text as rag_text

# --- the local model -------------------------------------------------------------------------


async def test_local_model_embeds_into_384_dimensions(embedder):
    vector = await embedder.embed_query("federated search over several databases")
    assert len(vector) == 384
    assert embedder.identity == EmbedderIdentity("sentence-transformers", "all-MiniLM-L6-v2", 384)


async def test_local_model_vectors_are_normalised(embedder):
    vectors = await embedder.embed_documents(["a short note", "another, longer sentence about lancedb"])
    assert [math.sqrt(sum(x * x for x in v)) for v in vectors] == pytest.approx([1.0, 1.0], abs=1e-4)


async def test_identical_text_embeds_to_an_identical_vector(embedder):
    first = await embedder.embed_query("the same words twice")
    second = await embedder.embed_query("the same words twice")
    assert first == second


async def test_related_texts_are_closer_than_unrelated_ones(embedder):
    cat, kitten, taxes = await embedder.embed_documents(
        ["a cat sat on the mat", "a kitten is sitting on a rug", "quarterly corporate tax filing deadlines"]
    )
    assert np.dot(cat, kitten) > np.dot(cat, taxes) + 0.2


async def test_documents_embed_in_batches_in_input_order(embedder):
    texts = ["alpha particle", "beta decay", "gamma ray", "delta wing", "epsilon greedy"]
    small_batches = get_embedder(EmbeddingsConfig(batch_size=2))
    assert small_batches.batch_size == 2
    batched = await small_batches.embed_documents(texts)
    one_by_one = [await embedder.embed_query(t) for t in texts]
    assert len(batched) == len(texts)
    np.testing.assert_allclose(np.array(batched), np.array(one_by_one), atol=1e-5)


async def test_embedding_no_documents_returns_no_vectors(embedder):
    assert await embedder.embed_documents([]) == []


def test_get_embedder_returns_one_embedder_per_configuration(embedder, app_config_defaults):
    assert get_embedder(app_config_defaults) is embedder
    assert get_embedder(app_config_defaults.embeddings) is embedder


def test_local_model_path_is_the_installed_offline_model():
    path = Path(local_model_path())
    assert path.is_dir()
    assert local_model_path("sentence-transformers/all-MiniLM-L6-v2") == str(path)


def test_local_model_with_another_vector_dim_fails_naming_vector_dim(embedder):
    wrong = get_embedder(EmbeddingsConfig(model=EmbeddingModelConfig(vector_dim=128)))
    with pytest.raises(EmbeddingError, match=r"384-dimensional.*vector_dim is 128"):
        wrong.load()  # type: ignore[attr-defined]


def test_the_local_model_runs_without_importing_sentence_transformers(embedder):
    # A plain transformer + pooling + normalise model: ~110 MiB less in every embedding process.
    from haiku.core.embedders.lean import LeanSentenceEncoder

    assert isinstance(embedder.load(), LeanSentenceEncoder)  # type: ignore[attr-defined]


def test_the_lean_and_onnx_encoders_give_sentence_transformers_vectors(embedder):
    from sentence_transformers import SentenceTransformer

    texts = ["  cells divide by mitosis ", "Ünïcode café", "", "word " * 400, *[f"note {i} on stars" for i in range(40)]]
    reference = SentenceTransformer(local_model_path(), device="cpu", local_files_only=True).encode(
        texts, batch_size=embedder.batch_size, normalize_embeddings=True
    )
    lean = embedder.load().encode(texts, embedder.batch_size)  # type: ignore[attr-defined]
    assert np.abs(np.asarray(lean) - reference).max() < 1e-5
    assert embedder.document_runtime == "onnx"  # type: ignore[attr-defined]  # the default: auto
    assert np.abs(np.asarray(embedder.encode(texts)) - reference).max() < 1e-5  # type: ignore[attr-defined]


def test_a_batch_of_long_texts_runs_in_forward_passes_within_the_token_budget(embedder, monkeypatch):
    from haiku.core.embedders import batching

    encoder = embedder.load()  # type: ignore[attr-defined]
    passes: list[tuple[int, int]] = []
    model = encoder._model

    def recording(**features):
        passes.append(tuple(features["input_ids"].shape))
        return model(**features)

    monkeypatch.setattr(encoder, "_model", recording)
    texts = [f"long text {i} " + "word " * 300 for i in range(16)] + ["short one", "short two"]
    encoder.encode(texts, batch_size=64)
    assert sum(rows for rows, _ in passes) == len(texts) and len(passes) > 1
    assert all(rows * width <= batching.CPU_FORWARD_TOKEN_BUDGET for rows, width in passes)
    assert passes[-1][1] < 16  # the short texts pad only to their own length


def _model_dir(tmp_path: Path, types: list[str], pooling: dict[str, Any]) -> Path:
    modules = [{"idx": i, "name": str(i), "path": "" if i == 0 else f"{i}_X", "type": t} for i, t in enumerate(types)]
    (tmp_path / "modules.json").write_text(json.dumps(modules))
    (tmp_path / "1_X").mkdir()
    (tmp_path / "1_X" / "config.json").write_text(json.dumps(pooling))
    return tmp_path


ST = "sentence_transformers.models."
MEAN = {"word_embedding_dimension": 8, "pooling_mode_mean_tokens": True, "pooling_mode_cls_token": False}


def test_a_plain_layout_is_recognised_with_its_pooling(tmp_path):
    layout = plain_layout(_model_dir(tmp_path, [ST + "Transformer", ST + "Pooling", ST + "Normalize"], MEAN))
    assert layout is not None and (layout["pooling"], layout["dimension"]) == ("mean", 8)


@pytest.mark.parametrize(
    "types, pooling",
    [
        ([ST + "Transformer", ST + "Pooling", ST + "Dense"], MEAN),  # a projection: sentence-transformers runs it
        ([ST + "Transformer", ST + "Pooling"], {"pooling_mode_max_tokens": True}),
        ([ST + "Transformer", ST + "Pooling"], {**MEAN, "pooling_mode_cls_token": True}),
    ],
)
def test_any_other_layout_is_left_to_sentence_transformers(tmp_path, types, pooling):
    assert plain_layout(_model_dir(tmp_path, types, pooling)) is None


def test_a_directory_without_modules_is_left_to_sentence_transformers(tmp_path):
    assert plain_layout(tmp_path) is None


# --- identity checks on open (docs/configuration.md) ---------------------------------------------------------------

CONFIGURED = EmbedderIdentity("sentence-transformers", "all-MiniLM-L6-v2", 384)
OTHER_MODEL = EmbedderIdentity("sentence-transformers", "paraphrase-MiniLM-L3-v2", 384)
OTHER_PROVIDER = EmbedderIdentity("openai", "all-MiniLM-L6-v2", 384)
OTHER_DIM = EmbedderIdentity("openai", "nomic-embed-text", 768)


def test_identity_round_trips_through_the_settings_record():
    assert EmbedderIdentity.from_dict(CONFIGURED.to_dict()) == CONFIGURED
    assert EmbedderIdentity.from_dict(None) is None
    assert EmbedderIdentity.from_dict({}) is None


def test_identity_comes_from_the_configured_model():
    assert EmbedderIdentity.from_config(EmbeddingModelConfig()) == CONFIGURED


@pytest.mark.parametrize("read_only", [True, False], ids=["read-only", "writable"])
def test_open_with_a_different_recorded_dimension_raises_config_mismatch(read_only: bool):
    with pytest.raises(ConfigMismatchError) as info:
        check_identity_on_open(OTHER_DIM, CONFIGURED, read_only=read_only, name="papers")
    message = str(info.value)
    assert "'papers'" in message
    assert "re-embed it (rebuild the database)" in message and "--db-name" not in message
    assert "haiku-ingester rebuild --db-name papers" in ingester_text(info.value)


@pytest.mark.parametrize("recorded", [OTHER_MODEL, OTHER_PROVIDER], ids=["model", "provider"])
def test_read_only_open_with_another_embedder_at_the_same_dimension_warns(recorded: EmbedderIdentity):
    with pytest.warns(EmbedderDriftWarning, match=r"re-embed it \(rebuild the database\)") as warned:
        check_identity_on_open(recorded, CONFIGURED, read_only=True, name="papers")
    assert "haiku-ingester rebuild --db-name papers" in rag_text(warned[0].message)


@pytest.mark.parametrize("recorded", [OTHER_MODEL, OTHER_PROVIDER], ids=["model", "provider"])
def test_writable_open_with_another_embedder_at_the_same_dimension_raises_config_mismatch(
    recorded: EmbedderIdentity,
):
    with pytest.raises(ConfigMismatchError, match=r"re-embed it \(rebuild the database\)") as info:
        check_identity_on_open(recorded, CONFIGURED, read_only=False, name="papers")
    assert "haiku-ingester rebuild --db-name papers" in rag_text(info.value)


@pytest.mark.parametrize("recorded", [CONFIGURED, None], ids=["same", "unrecorded"])
def test_open_with_the_configured_or_no_recorded_identity_passes_silently(recorded):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_identity_on_open(recorded, CONFIGURED, read_only=False, name="papers")


# --- identity across a selection (docs/configuration.md) -----------------------------------------------------------


def test_selection_with_different_embedders_raises_config_mismatch_with_the_spec_gist():
    with pytest.raises(ConfigMismatchError) as info:
        check_selection_identities([("a", CONFIGURED), ("b", OTHER_DIM)])
    assert str(info.value) == (
        "databases 'a' and 'b' were written with different embedders "
        "(sentence-transformers/all-MiniLM-L6-v2 at 384 dimensions and openai/nomic-embed-text at 768 "
        "dimensions); searching them together embeds the query once, so their vectors are not comparable"
    )


def test_selection_differing_only_in_model_name_raises_config_mismatch():
    with pytest.raises(ConfigMismatchError, match="'a' and 'c'"):
        check_selection_identities([("a", CONFIGURED), ("b", CONFIGURED), ("c", OTHER_MODEL)])


def test_selection_sharing_one_embedder_passes():
    check_selection_identities([("a", CONFIGURED), ("b", CONFIGURED)])


def test_selection_skips_databases_that_record_no_identity():
    check_selection_identities([("a", None), ("b", CONFIGURED), ("c", None), ("d", CONFIGURED)])


# --- the OpenAI-compatible embedder against a real local server ---------------------------------

DIM = 4


class _Server:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.reply: Any = None  # overrides the normal answer when set
        self.status = 200
        self.dim = DIM


def _vector(text: str, dim: int) -> list[float]:
    return [float(len(text)), float(ord(text[0]) if text else 0)] + [0.5] * (dim - 2)


def _handler(state: _Server) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append({"path": self.path, **body})
            state.headers.append(dict(self.headers))
            if state.reply is not None:
                payload = state.reply
            else:
                items = [
                    {"object": "embedding", "index": i, "embedding": _vector(t, state.dim)}
                    for i, t in enumerate(body["input"])
                ]
                # Out of order on purpose: clients must sort by index.
                payload = {"object": "list", "data": list(reversed(items)), "model": body["model"]}
            raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self.send_response(state.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture
def server() -> Iterator[tuple[_Server, str]]:
    state = _Server()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def _openai(base_url: str, *, batch_size: int = 64, api_key: str | None = None, dim: int = DIM):
    return get_embedder(
        EmbeddingsConfig(
            model=EmbeddingModelConfig(
                provider="openai", name="nomic-embed-text", vector_dim=dim, base_url=base_url, api_key=api_key
            ),
            batch_size=batch_size,
        )
    )


async def test_openai_embedder_posts_model_and_input_to_the_embeddings_endpoint(server):
    state, base_url = server
    vector = await _openai(base_url, api_key="sekrit").embed_query("hello")
    assert vector == _vector("hello", DIM)
    (request,) = state.requests
    assert request == {"path": "/v1/embeddings", "model": "nomic-embed-text", "input": ["hello"]}
    assert state.headers[0]["Authorization"] == "Bearer sekrit"


async def test_openai_embedder_batches_documents_and_keeps_input_order(server):
    state, base_url = server
    texts = ["a", "bb", "ccc", "dddd", "eeeee"]
    vectors = await _openai(base_url, batch_size=2).embed_documents(texts)
    assert vectors == [_vector(t, DIM) for t in texts]
    assert [r["input"] for r in state.requests] == [["a", "bb"], ["ccc", "dddd"], ["eeeee"]]


async def test_openai_embedder_reports_its_identity(server):
    _, base_url = server
    assert _openai(base_url).identity == EmbedderIdentity("openai", "nomic-embed-text", DIM)


async def test_openai_embedder_with_server_down_raises_embedding_error_naming_base_url():
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}/v1"
    with pytest.raises(EmbeddingError, match=re.escape(f"embeddings.model.base_url {base_url}")):
        await _openai(base_url).embed_query("hello")


async def test_openai_embedder_http_error_raises_embedding_error_naming_base_url(server):
    state, base_url = server
    state.status, state.reply = 500, {"error": "model not loaded"}
    with pytest.raises(EmbeddingError, match=re.escape(base_url) + ".*500"):
        await _openai(base_url).embed_query("hello")


async def test_openai_embedder_rejects_an_answer_that_is_not_an_embeddings_response(server):
    state, base_url = server
    state.reply = b"<html>not json</html>"
    with pytest.raises(EmbeddingError, match="OpenAI embeddings response"):
        await _openai(base_url).embed_query("hello")


async def test_openai_embedder_rejects_vectors_of_another_dimension(server):
    state, base_url = server
    state.dim = DIM + 2
    with pytest.raises(EmbeddingError, match=f"{DIM + 2}-dimensional.*vector_dim is {DIM}"):
        await _openai(base_url).embed_query("hello")
