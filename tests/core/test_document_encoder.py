"""Documents embedded by the model's ONNX export (embeddings.document_runtime, docs/configuration.md)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from haiku.core.config import config_from_dict
from haiku.core.embedders import EmbeddingError, get_embedder, local_model_path
from haiku.core.embedders.batching import forward_passes
from haiku.core.embedders.lean import LeanSentenceEncoder

pytestmark = pytest.mark.slow

TEXTS = [
    "cells",
    "  Mitochondria produce ATP through oxidative phosphorylation. ",
    "Ünïcode café notes",
    "The seasons follow the tilt of the Earth's axis " * 30,  # over 256 tokens: truncated alike
    *[f"note {i} on the stars of the southern sky" for i in range(20)],
]


def _embedder(tmp_path, runtime: str, **model):
    embeddings = {"document_runtime": runtime, **({"model": model} if model else {})}
    return get_embedder(config_from_dict({"storage": {"data_dir": str(tmp_path / "data")}, "embeddings": embeddings}))


def test_onnx_document_vectors_match_the_torch_encoder(tmp_path):
    onnx, torch = _embedder(tmp_path, "onnx"), _embedder(tmp_path, "torch")
    ours, theirs = np.asarray(onnx.encode(TEXTS)), np.asarray(torch.encode(TEXTS))  # type: ignore[attr-defined]
    assert onnx.document_runtime == "onnx" and torch.document_runtime == "torch"  # type: ignore[attr-defined]
    assert ours.shape == (len(TEXTS), 384)
    assert (ours * theirs).sum(axis=1).min() >= 0.9999


def test_auto_embeds_documents_with_onnx_and_records_the_same_identity(tmp_path):
    auto, torch = _embedder(tmp_path, "auto"), _embedder(tmp_path, "torch")
    assert auto.prepare_document_encoder() == "onnx"  # type: ignore[attr-defined]
    assert auto.identity == torch.identity  # databases embedded by either stay valid for the other


def test_document_runtime_torch_embeds_with_the_torch_encoder(tmp_path):
    torch = _embedder(tmp_path, "torch")
    assert torch.prepare_document_encoder() == "torch"  # type: ignore[attr-defined]
    assert isinstance(torch.load(), LeanSentenceEncoder)  # type: ignore[attr-defined]
    vectors = np.asarray(torch.encode(TEXTS[:3]))  # type: ignore[attr-defined]
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_onnx_required_for_a_model_it_cannot_run_is_an_error_naming_the_key(tmp_path):
    model = tmp_path / "odd-model"
    shutil.copytree(local_model_path(), model)
    (model / "modules.json").write_text("[]")  # not a transformer-and-pooling layout
    embedder = _embedder(tmp_path, "onnx", name=str(model))
    with pytest.raises(EmbeddingError, match=r"embeddings\.document_runtime is onnx"):
        embedder.encode(["a text"])  # type: ignore[attr-defined]


def test_auto_with_a_model_it_cannot_run_embeds_with_torch(tmp_path):
    model = tmp_path / "max-pooled"
    shutil.copytree(local_model_path(), model)
    pooling = model / "1_Pooling" / "config.json"
    settings = json.loads(pooling.read_text())
    settings.update(pooling_mode_mean_tokens=False, pooling_mode_max_tokens=True)
    pooling.write_text(json.dumps(settings))  # not exported: loads through sentence-transformers
    embedder = _embedder(tmp_path, "auto", name=str(model))
    assert embedder.prepare_document_encoder() == "torch"  # type: ignore[attr-defined]
    assert embedder.document_runtime == "torch"  # type: ignore[attr-defined]
    assert len(embedder.encode(["a text"])[0]) == 384  # type: ignore[attr-defined]


@pytest.mark.parametrize("budget", [1024, 4096])
def test_forward_passes_cover_every_row_once_within_the_budget(budget):
    lengths = [256] * 10 + [300, 40, 512, 2000, 7, 7, 7, 1]
    passes = list(forward_passes(lengths, budget))
    covered = [row for rows, _ in passes for row in range(len(lengths))[rows]]
    assert covered == list(range(len(lengths)))
    for rows, width in passes:
        assert width == max(lengths[rows])  # each pass cut to its own longest row
        assert (rows.stop - rows.start) * width <= budget or rows.stop - rows.start == 1


@pytest.mark.parametrize("runtime", ["auto", "onnx"])
def test_an_export_that_cannot_be_made_falls_back_to_torch_or_names_the_key(tmp_path, runtime):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the model cache would be")
    embeddings = {"document_runtime": runtime, "model_cache_dir": str(blocked)}
    embedder = get_embedder(config_from_dict({"storage": {"data_dir": str(tmp_path / "data")}, "embeddings": embeddings}))
    if runtime == "onnx":
        with pytest.raises(EmbeddingError, match=r"embeddings\.document_runtime is onnx.*ONNX export failed"):
            embedder.prepare_document_encoder()  # type: ignore[attr-defined]
    else:
        assert embedder.prepare_document_encoder() == "torch"  # type: ignore[attr-defined]
        assert len(embedder.encode(["a text"])[0]) == 384  # type: ignore[attr-defined]
