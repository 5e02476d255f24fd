"""The ingester embeds with the ONNX export and never imports torch (docs/ingester.md, "Memory")."""

from __future__ import annotations

import subprocess
import sys

import pytest
from ingester_support import fs_source, write_files, write_ingester_config

from support import cli_env

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

# run-batch in this process; when it is done, the heavy modules it ever imported.
_RUN_BATCH = (
    "import os, sys\n"
    "out = sys.argv.pop(1)\n"
    "from haiku.ingester.cli import app\n"
    "sys.argv[0] = 'haiku-ingester'\n"
    "try:\n"
    "    app()\n"
    "except SystemExit as exc:\n"
    "    heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'transformers', 'sentence_transformers'))\n"
    "    open(out, 'w').write(','.join(heavy))\n"
    "    sys.stdout.flush()\n"
    "    os._exit(exc.code if isinstance(exc.code, int) else 1)\n"
)


def _run_batch(tmp_path, runtime: str, cache: str):
    folder = tmp_path / f"notes-{runtime}"
    write_files(folder, {f"n{i}.md": f"# Note {i}\n\nSparrows and owls, entry {i}.\n" for i in range(3)})
    config = write_ingester_config(
        tmp_path / f"{runtime}.yaml",
        data_dir=tmp_path / f"data-{runtime}",
        databases={"notes": tmp_path / f"{runtime}.lancedb"},
        ingested={"notes": [fs_source(folder)]},
        embeddings={"document_runtime": runtime},
    )
    modules = tmp_path / f"modules-{runtime}.txt"
    done = subprocess.run(
        [sys.executable, "-c", _RUN_BATCH, str(modules), "--config", str(config), "run-batch"],
        capture_output=True, text=True, timeout=500, env=cli_env(HAIKU_MODEL_CACHE_DIR=cache),
    )
    return done, modules.read_text()


def test_run_batch_with_no_export_cached_embeds_without_importing_torch(tmp_path):
    cache = tmp_path / "models"  # empty: the export is made first, by a child process
    done, heavy = _run_batch(tmp_path, "auto", str(cache))
    assert (done.returncode, done.stdout.strip()) == (0, "Batch complete: 3 succeeded, 0 dead"), done.stderr[-2000:]
    assert heavy == ""
    assert [p.name for p in (cache / "onnx").iterdir() if not p.name.startswith(".")]


def test_run_batch_with_document_runtime_torch_embeds_with_torch(tmp_path):
    import os

    done, heavy = _run_batch(tmp_path, "torch", os.environ["HAIKU_MODEL_CACHE_DIR"])
    assert (done.returncode, done.stdout.strip()) == (0, "Batch complete: 3 succeeded, 0 dead"), done.stderr[-2000:]
    assert "torch" in heavy.split(",")
