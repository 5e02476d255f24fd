"""A damaged query-encoder export is found on load, removed and made again (haiku.core.embedders.onnx_manifest).

Each test damages a copy of the session's export (tests/conftest.py) in a
cache directory of its own, the way a disk, a restore or a hand edit would.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from structlog.testing import capture_logs

from haiku.core.config import AppConfig, config_from_dict
from haiku.core.embedders import get_embedder, local_model_path
from haiku.core.embedders.lean import plain_layout
from haiku.core.embedders.onnx_query import (
    MANIFEST_FILE,
    MIN_PROBE_COSINE,
    DamagedExportError,
    exported_model_dir,
    open_export,
)

pytestmark = pytest.mark.slow

MODEL = "all-MiniLM-L6-v2"
QUERY = "What is the role of mitochondria in apoptosis?"


@pytest.fixture(scope="module")
def layout() -> dict:
    found = plain_layout(local_model_path())
    assert found is not None
    return found


@pytest.fixture(scope="module")
def session_export() -> Path:
    folder = exported_model_dir(AppConfig().model_cache_dir, MODEL, local_model_path())
    assert folder is not None
    return folder


@pytest.fixture
def copied(tmp_path, session_export) -> Path:
    """A copy of the session's export, with the same modification times, in a cache of its own."""
    folder = tmp_path / "cache" / "onnx" / session_export.name
    shutil.copytree(session_export, folder)
    return folder


def _edit_manifest(change: Callable[[dict], object]) -> Callable[[Path], None]:
    def damage(folder: Path) -> None:
        manifest = json.loads((folder / MANIFEST_FILE).read_text())
        change(manifest)
        (folder / MANIFEST_FILE).write_text(json.dumps(manifest))

    return damage


def _truncate(name: str) -> Callable[[Path], None]:
    def damage(folder: Path) -> None:
        with (folder / name).open("r+b") as file:
            file.truncate((folder / name).stat().st_size // 2)

    return damage


def _rewrite_same_size(folder: Path) -> None:
    weights = folder / "model.onnx.data"
    with weights.open("r+b") as file:
        file.seek(4096)
        chunk = file.read(4096)
        file.seek(4096)
        file.write(bytes(255 - b for b in chunk))


DAMAGES = {
    "an input renamed": (_edit_manifest(lambda m: m["inputs"].__setitem__(0, "input_idz")), "inputs"),
    "an input the graph takes left out": (
        _edit_manifest(lambda m: m["inputs"].remove("token_type_ids")), "graph takes the inputs"
    ),
    "the pooling changed": (_edit_manifest(lambda m: m.__setitem__("pooling", "cls")), "pooling is 'cls'"),
    "the lower-casing changed": (_edit_manifest(lambda m: m.__setitem__("do_lower_case", True)), "do_lower_case"),
    "the dimension changed": (_edit_manifest(lambda m: m.__setitem__("dimension", 1e999)), "dimension"),
    "no record of the files": (_edit_manifest(lambda m: m.pop("files")), "records no size and checksum"),
    "the weights truncated": (_truncate("model.onnx.data"), "model.onnx.data is 45,133,824 bytes"),
    "the graph truncated": (_truncate("model.onnx"), "model.onnx is 44,226 bytes"),
    "the weights rewritten at the same size": (_rewrite_same_size, "checksum differs"),
    "the tokenizer replaced": (lambda f: (f / "tokenizer.json").write_text("{}"), "tokenizer.json is 2 bytes"),
    "the manifest not JSON": (lambda f: (f / MANIFEST_FILE).write_text("{half"), "not a JSON object"),
}


@pytest.mark.parametrize("damage, says", DAMAGES.values(), ids=DAMAGES.keys())
def test_each_damage_is_found_when_the_export_is_opened(copied, layout, damage, says):
    damage(copied)
    with pytest.raises(DamagedExportError, match=says):
        open_export(copied, layout)


def test_a_copied_or_touched_export_is_hashed_once_then_opened_as_cheaply_as_before(copied, layout, session_export):
    weights = copied / "model.onnx.data"
    later = weights.stat().st_mtime_ns + 5_000_000_000
    os.utime(weights, ns=(later, later))
    encoder = open_export(copied, layout)  # the same bytes: still the export
    recorded = json.loads((copied / MANIFEST_FILE).read_text())["files"]["model.onnx.data"]
    assert recorded["mtime_ns"] == later  # so the next load compares times, and hashes nothing
    assert encoder.encode([QUERY]) == open_export(session_export, layout).encode([QUERY])


async def test_a_damaged_export_is_made_again_and_queries_match_torch(copied, embedder):
    DAMAGES["the pooling changed"][0](copied)  # the damage that changed every score without a word
    config = config_from_dict(
        {"storage": {"data_dir": str(copied.parents[2] / "data")},
         "embeddings": {"query_runtime": "auto", "model_cache_dir": str(copied.parents[1])}}
    )
    onnx = get_embedder(config)
    with capture_logs() as logs:
        vector = np.asarray(await onnx.embed_query(QUERY))
    assert onnx.query_runtime == "onnx"  # type: ignore[attr-defined]
    assert [e["event"] for e in logs if e["log_level"] == "warning"] == ["embedder.onnx_export_damaged"]
    assert float(vector @ np.asarray(embedder.encode([QUERY])[0])) >= MIN_PROBE_COSINE
    remade = exported_model_dir(copied.parents[1], MODEL, local_model_path())
    assert remade is not None and json.loads((remade / MANIFEST_FILE).read_text())["pooling"] == "mean"


_SEARCH_QUERY = (
    "import asyncio, sys\n"
    "from haiku.core.config import AppConfig\n"
    "from haiku.core.embedders import get_embedder\n"
    f"vector = asyncio.run(get_embedder(AppConfig()).embed_query({QUERY!r}))\n"
    "print(' '.join(map(str, vector)))\n"
    "print('torch' in sys.modules)\n"
)


def test_a_search_over_a_damaged_export_neither_crashes_nor_leaves_it_for_the_next(copied, embedder):
    DAMAGES["an input renamed"][0](copied)  # once a KeyError out of every search
    env = {**os.environ, "HAIKU_MODEL_CACHE_DIR": str(copied.parents[1])}
    first, second = (
        subprocess.run([sys.executable, "-c", _SEARCH_QUERY], capture_output=True, text=True, env=env, timeout=600)
        for _ in range(2)
    )
    assert first.returncode == 0 and "Traceback" not in first.stderr, first.stderr
    assert second.returncode == 0, second.stderr
    *vector, torch_loaded = second.stdout.split()
    assert torch_loaded == "False"  # the next search is served by the export made again, not by torch
    theirs = np.asarray(embedder.encode([QUERY])[0])
    assert float(np.asarray([float(x) for x in vector]) @ theirs) >= MIN_PROBE_COSINE
