"""The `haiku-rag visualize` picture in docs/cli.md, made from a sample PDF of examples/.

    python docs/screenshots/visualize.py     # docs/screenshots/visualize-chunk.png

It does what a user does, with the installed commands, offline, in a
temporary directory: ingest examples/docs/handbook/capacity-planning.pdf with
`haiku-ingester run-batch`, find the chunk about storage with `haiku-rag
search --json`, and draw it on its page with `haiku-rag visualize`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

IMAGES = Path(__file__).resolve().parent
REPO = IMAGES.parent.parent
SAMPLE = REPO / "examples" / "docs" / "handbook" / "capacity-planning.pdf"
QUERY = "how much storage does a chunk with its vector take"
TARGET = IMAGES / "visualize-chunk.png"
BIN = Path(sys.executable).parent


def run(*command: str) -> str:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command[:3])}… failed:\n{done.stderr}")
    return done.stdout


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "docs").mkdir()
        shutil.copy(SAMPLE, root / "docs" / SAMPLE.name)
        config = root / "haiku.rag.yaml"
        config.write_text(
            f"storage:\n  data_dir: {root / 'data'}\n  auto_vacuum: false\n"
            "processing:\n  chunk_size: 64\n"
            f"lancedb:\n  databases:\n    handbook: {root / 'handbook.lancedb'}\n"
            "ingester:\n  databases:\n    handbook:\n      sources:\n"
            f"        - {{type: fs, root: {root / 'docs'}, id: handbook}}\n",
            encoding="utf-8",
        )
        run(str(BIN / "haiku-ingester"), "--config", str(config), "run-batch")
        rag = [str(BIN / "haiku-rag"), "--config", str(config), "--db-name", "handbook"]
        hit = json.loads(run(*rag, "search", QUERY, "--limit", "1", "--json"))[0]
        pages = json.loads(run(*rag, "visualize", hit["chunk_id"], "-o", str(root / "out"), "--json"))["pages"]
        shutil.copy(pages[0]["path"], TARGET)
    print(TARGET)


if __name__ == "__main__":
    main()
