"""Running the real `haiku-rag` CLI in a subprocess for the QA tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

CLI = [sys.executable, "-c", "from haiku.rag.cli import main; main()"]


def cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"})
    # The subprocess imports haiku the way this process did, installed or not.
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p and Path(p).is_dir())
    return env


def write_config(path: Path, databases: dict[str, Path], model_url: str, data_dir: Path) -> Path:
    config: dict[str, Any] = {
        "storage": {"data_dir": str(data_dir)},
        "lancedb": {"databases": {name: str(location) for name, location in databases.items()}},
        "qa": {"model": {"name": "scripted", "base_url": model_url}, "request_limit": 6},
    }
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def run_cli(*args: str, stdin: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], input=stdin, capture_output=True, text=True, env=cli_env(), timeout=timeout, cwd="/"
    )
