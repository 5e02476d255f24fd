"""Running the real `haiku-rag` CLI in a subprocess for the QA tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from support import cli_env, write_config

CLI = [sys.executable, "-c", "from haiku.rag.cli import main; main()"]


def write_qa_config(path: Path, databases: dict[str, Path], model_url: str, data_dir: Path) -> Path:
    """A config over ``databases`` whose chat model is the scripted one at ``model_url``."""
    config: dict[str, Any] = {
        "storage": {"data_dir": str(data_dir)},
        "lancedb": {"databases": {name: str(location) for name, location in databases.items()}},
        "qa": {"model": {"name": "scripted", "base_url": model_url}, "request_limit": 6},
    }
    return write_config(path, config)


def run_cli(*args: str, stdin: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], input=stdin, capture_output=True, text=True, env=cli_env(), timeout=timeout, cwd="/"
    )
