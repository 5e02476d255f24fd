"""The benchmark's embedding cache returns exactly what was stored and survives torn writes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from bench.embed_cache import EmbeddingCache


def _cache(root: Path, model: str = "m") -> EmbeddingCache:
    return EmbeddingCache(root, provider="p", model=model, vector_dim=3)


def test_cached_vectors_come_back_in_the_order_asked(tmp_path: Path):
    cache = _cache(tmp_path)
    cache.add(["a", "b"], [[1, 0, 0], [0, 1, 0]])
    np.testing.assert_array_equal(cache.get(["b", "a", "b"]), [[0, 1, 0], [1, 0, 0], [0, 1, 0]])


def test_a_reopened_cache_holds_what_an_earlier_run_stored(tmp_path: Path):
    _cache(tmp_path).add(["a"], [[1, 2, 3]])
    np.testing.assert_array_equal(_cache(tmp_path).get(["a"]), [[1, 2, 3]])


def test_fill_embeds_only_texts_not_cached(tmp_path: Path):
    cache = _cache(tmp_path)
    cache.add(["a"], [[1, 0, 0]])
    asked: list[list[str]] = []

    def encode(texts: list[str]) -> list[list[float]]:
        asked.append(texts)
        return [[float(len(t)), 0, 0] for t in texts]

    assert cache.fill(["a", "bb", "bb", "ccc"], encode, batch_size=8, log=lambda _: None) == 2
    assert sorted(t for batch in asked for t in batch) == ["bb", "ccc"]


def test_another_model_never_sees_this_models_vectors(tmp_path: Path):
    _cache(tmp_path, model="m1").add(["a"], [[1, 0, 0]])
    assert "a" not in _cache(tmp_path, model="m2")


def test_a_torn_append_keeps_the_complete_rows(tmp_path: Path):
    cache = _cache(tmp_path)
    cache.add(["a", "b"], [[1, 0, 0], [0, 1, 0]])
    with (cache.dir / "vectors.f32").open("ab") as fh:  # half a row, its key never written
        fh.write(np.float32(7).tobytes())
    reopened = _cache(tmp_path)
    assert len(reopened) == 2
    reopened.add(["c"], [[0, 0, 1]])
    np.testing.assert_array_equal(_cache(tmp_path).get(["c", "a"]), [[0, 0, 1], [1, 0, 0]])


def test_a_missing_text_is_named(tmp_path: Path):
    with pytest.raises(KeyError, match="nowhere"):
        _cache(tmp_path).get(["nowhere"])
