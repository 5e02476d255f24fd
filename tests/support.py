"""Helpers every package's tests share: a CLI subprocess's environment, a config on disk, a database copy.

``tests/`` holds the root ``conftest.py``, so pytest puts it on ``sys.path``
and any test module can ``from support import …``. What only one package's
tests need stays in that package's own support module.
"""

from __future__ import annotations

import ast
import os
import shutil
from pathlib import Path
from typing import Any

import yaml


def cli_env(**extra: str) -> dict[str, str]:
    """This process's environment for a CLI subprocess, with ``extra`` on top.

    Offline model loading; no ``HAIKU_RAG_*`` variable the developer's shell may
    set (a config path, say) and no systemd ``NOTIFY_SOCKET`` leak in.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("HAIKU_RAG_") and k != "NOTIFY_SOCKET"}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    env.update(extra)
    return env


def write_config(path: Path, data: dict[str, Any]) -> Path:
    """Write ``data`` as a YAML config file, keys in the order given."""
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def copy_database(source: Path, target: Path) -> Path:
    """A copy of a database directory, without its lock files (a copy is nobody's lock)."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(".haiku-*.lock"))
    return target


def absolute_import(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The module a ``from … import`` statement in ``module`` names, its leading dots resolved."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base.pop()
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)
