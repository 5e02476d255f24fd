"""The torch-free query encoder (haiku.core.embedders.onnx_query; docs/configuration.md).

The session export (tests/conftest.py) is reused; tests that need an export
of their own make it in a temporary cache directory.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from haiku.core.config import config_from_dict
from haiku.core.embedders import EmbeddingError, get_embedder, local_model_path
from haiku.core.embedders.onnx_query import (
    EXPORT_FORMAT,
    MANIFEST_FILE,
    MIN_PROBE_COSINE,
    OnnxQueryEncoder,
    cache_key,
    exported_model_dir,
)

pytestmark = pytest.mark.slow

QUERIES = [
    "What is the role of mitochondria in apoptosis?",
    "bread",
    "  leading and trailing spaces  ",
    "Ünïcödé and numbers 12,345.6 in a query",
    "a very long query " * 80,  # past the 256-token truncation
]


def _config(tmp_path: Path, runtime: str, cache: Path | None = None):
    embeddings = {"query_runtime": runtime}
    if cache is not None:
        embeddings["model_cache_dir"] = str(cache)
    return config_from_dict({"storage": {"data_dir": str(tmp_path / "data")}, "embeddings": embeddings})


async def test_onnx_query_vectors_match_the_torch_encoder(tmp_path, embedder):
    onnx = get_embedder(_config(tmp_path, "onnx"))
    assert onnx.query_runtime == "onnx"  # type: ignore[attr-defined]
    for query in QUERIES:
        ours = np.asarray(await onnx.embed_query(query))
        theirs = np.asarray(embedder.encode([query])[0])  # type: ignore[attr-defined]
        assert float(ours @ theirs) >= MIN_PROBE_COSINE
        assert np.abs(ours - theirs).max() < 1e-5
        assert np.linalg.norm(ours) == pytest.approx(1.0, abs=1e-6)


def test_the_onnx_encoder_keeps_the_recorded_embedder_identity(tmp_path):
    torch_identity = get_embedder(_config(tmp_path, "torch")).identity
    assert get_embedder(_config(tmp_path, "onnx")).identity == torch_identity


def test_query_runtime_torch_never_loads_onnx(tmp_path):
    embedder = get_embedder(_config(tmp_path, "torch", cache=tmp_path / "unused"))
    assert embedder.query_runtime == "torch"  # type: ignore[attr-defined]
    assert not (tmp_path / "unused").exists()


def test_reading_query_runtime_exports_and_loads_nothing(tmp_path):
    auto = get_embedder(_config(tmp_path, "auto", cache=tmp_path / "auto-cache"))
    assert auto.query_runtime is None  # type: ignore[attr-defined]  # undecided until the first query
    required = get_embedder(_config(tmp_path, "onnx", cache=tmp_path / "onnx-cache"))
    assert required.query_runtime == "onnx"  # type: ignore[attr-defined]
    assert not (tmp_path / "auto-cache").exists() and not (tmp_path / "onnx-cache").exists()


def test_the_cache_key_follows_the_model_files(tmp_path):
    model = tmp_path / "model"
    shutil.copytree(local_model_path(), model)
    before = cache_key("all-MiniLM-L6-v2", model)
    assert cache_key("all-MiniLM-L6-v2", model) == before
    (model / "config.json").write_text((model / "config.json").read_text() + "\n")
    assert cache_key("all-MiniLM-L6-v2", model) != before


def test_an_export_without_its_manifest_is_not_used(tmp_path):
    folder = tmp_path / "onnx" / cache_key("all-MiniLM-L6-v2", local_model_path())
    folder.mkdir(parents=True)
    (folder / "model.onnx").write_bytes(b"half written")
    assert exported_model_dir(tmp_path, "all-MiniLM-L6-v2", local_model_path()) is None


def test_a_missing_export_is_made_checked_and_kept_and_stale_exports_go(tmp_path):
    cache = tmp_path / "cache"
    source = str(Path(local_model_path()).resolve())
    other_model = tmp_path / "another-model"
    other_model.mkdir()
    stale = {
        "older": {"export_format": EXPORT_FORMAT - 1},
        "superseded": {"export_format": EXPORT_FORMAT, "source": source},  # the same files before they changed
        "orphaned": {"export_format": EXPORT_FORMAT, "source": str(tmp_path / "deleted-venv" / "model")},
    }
    live = {"export_format": EXPORT_FORMAT, "source": str(other_model)}
    for name, manifest in [*stale.items(), ("live", live)]:
        (cache / "onnx" / name).mkdir(parents=True)
        (cache / "onnx" / name / MANIFEST_FILE).write_text(json.dumps(manifest))
    unknown = cache / "onnx" / "not-an-export"
    unknown.mkdir()
    embedder = get_embedder(_config(tmp_path, "auto", cache=cache))
    assert embedder.prepare_query_encoder() == "onnx"  # type: ignore[attr-defined]
    assert embedder.query_runtime == "onnx"  # type: ignore[attr-defined]  # decided now
    folder = exported_model_dir(cache, "all-MiniLM-L6-v2", local_model_path())
    assert folder is not None
    manifest = json.loads((folder / MANIFEST_FILE).read_text())
    assert manifest["probe_min_cosine"] >= MIN_PROBE_COSINE
    assert manifest["source"] == source
    # No temporary folder left, stale exports removed; another model's export and what is not an export kept.
    assert sorted(p.name for p in folder.parent.iterdir()) == sorted([folder.name, unknown.name, "live"])
    assert OnnxQueryEncoder(folder).dimension == 384


def test_an_export_optimised_by_another_onnx_runtime_is_optimised_again_with_the_same_vectors(tmp_path):
    import onnxruntime

    from haiku.core.config import AppConfig

    config = AppConfig()
    folder = exported_model_dir(config.model_cache_dir, "all-MiniLM-L6-v2", local_model_path())
    assert folder is not None  # the session's export (tests/conftest.py)
    manifest = json.loads((folder / MANIFEST_FILE).read_text())
    assert manifest["optimized_by"] == onnxruntime.__version__
    other = tmp_path / "export"
    shutil.copytree(folder, other)
    (other / MANIFEST_FILE).write_text(json.dumps({**manifest, "optimized_by": "0.0.1"}))
    levels = onnxruntime.GraphOptimizationLevel
    ours, theirs = OnnxQueryEncoder(folder), OnnxQueryEncoder(other)
    assert ours._session.get_session_options().graph_optimization_level == levels.ORT_DISABLE_ALL
    assert theirs._session.get_session_options().graph_optimization_level == levels.ORT_ENABLE_ALL
    assert np.abs(np.asarray(ours.encode(QUERIES)) - np.asarray(theirs.encode(QUERIES))).max() < 1e-6


def test_onnx_required_for_a_model_it_cannot_run_is_an_error_naming_the_key(tmp_path):
    model = tmp_path / "odd-model"
    shutil.copytree(local_model_path(), model)
    (model / "modules.json").write_text("[]")  # not a transformer-and-pooling layout
    config = config_from_dict(
        {
            "storage": {"data_dir": str(tmp_path / "data")},
            "embeddings": {"query_runtime": "onnx", "model": {"name": str(model)}},
        }
    )
    with pytest.raises(EmbeddingError, match=r"embeddings\.query_runtime is onnx"):
        get_embedder(config).prepare_query_encoder()  # type: ignore[attr-defined]


def test_a_query_in_a_fresh_process_imports_no_torch(tmp_path):
    """The point of the exercise: a search's query costs no torch import."""
    code = (
        "import asyncio, sys\n"
        "from haiku.core.config import AppConfig\n"
        "from haiku.core.embedders import get_embedder\n"
        "vector = asyncio.run(get_embedder(AppConfig()).embed_query('cells'))\n"
        "print(len(vector), 'torch' in sys.modules, 'transformers' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["384", "False", "False"]
