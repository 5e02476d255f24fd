"""Fixtures shared by every package's tests.

The embedding model loads once per test session (the embedder is cached per
process by ``haiku.core.embedders.get_embedder``); subprocess tests load their own.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"
# The ONNX query encoder is exported once into the repository's pytest cache,
# shared by this process and every CLI subprocess of the session: by the first
# search in this process or before the first subprocess (support.cli_env).
os.environ.setdefault("HAIKU_MODEL_CACHE_DIR", str(REPO_ROOT / ".pytest_cache" / "haiku-models"))


@pytest.fixture(scope="session")
def query_encoder_exported() -> None:
    """The query encoder exported into the session's cache (a CLI subprocess's helpers do it too)."""
    from support import export_query_encoder

    export_query_encoder()


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def app_config_defaults():
    from haiku.core.config import AppConfig

    return AppConfig()


@pytest.fixture(scope="session")
def embedder(app_config_defaults):
    """The real all-MiniLM-L6-v2 embedder, loaded once for the session."""
    from haiku.core.embedders import get_embedder

    emb = get_embedder(app_config_defaults)
    emb.load()  # type: ignore[attr-defined]
    return emb


@pytest.fixture
def make_config(tmp_path: Path) -> Callable[..., Any]:
    """Build a validated AppConfig from a dict, with data_dir under tmp_path by default."""
    from haiku.core.config import config_from_dict

    def build(data: dict[str, Any] | None = None, **sections: Any):
        merged: dict[str, Any] = dict(data or {})
        merged.update(sections)
        merged.setdefault("storage", {})
        merged["storage"].setdefault("data_dir", str(tmp_path / "data"))
        return config_from_dict(merged)

    return build
