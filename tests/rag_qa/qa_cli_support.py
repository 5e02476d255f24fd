"""Running the real `haiku-rag` CLI for the QA tests: in a subprocess, or in process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from support import cli_env, run_main_in_process, write_config

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


def invoke(*args: str, stdin: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``run_cli`` in this process (``support.run_main_in_process``), for tests of what a command
    prints and its exit status; ``timeout`` is ``run_cli``'s, here pytest-timeout bounds the test."""
    from haiku.rag.cli import main

    return run_main_in_process(main, [CLI[1], *args], input=stdin, cwd=Path("/"))
