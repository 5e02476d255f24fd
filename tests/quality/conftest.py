"""Fixtures of the quality tests: the benchmark helpers under bench/ and the federation fixture."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
for entry in (REPO_ROOT, HERE):  # bench.* and fixture_corpus, whatever pytest's import mode
    if str(entry) not in sys.path:
        sys.path.insert(0, str(entry))

from fixture_corpus import build_databases, layout_config  # noqa: E402


@pytest.fixture(scope="session")
async def federation_fixture(tmp_path_factory, embedder):
    """The fixture corpus written once into one database and once split over three.

    Returns ``config(layout, fusion="rrf", fts_idf="global")``, an AppConfig naming the layout's databases.
    """
    root = tmp_path_factory.mktemp("federation")
    await build_databases(root, embedder)
    return lambda layout, fusion="rrf", fts_idf="global": layout_config(root, layout, fusion, fts_idf)
