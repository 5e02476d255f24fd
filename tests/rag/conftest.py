"""Real databases for the haiku.rag tests, built once per session from short texts.

Tests that only read share these directories; a test that writes copies one
first (``copy_database``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rag_support import EXTRA, PAPERS, WIKI, add_document, build_config, build_database

from support import copy_database


@pytest.fixture(scope="session")
def corpus_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("rag-corpus")


@pytest.fixture(scope="session")
async def built(corpus_dir, embedder) -> dict:
    """papers and wiki (3 documents each), with their stored documents by title."""
    config = build_config(corpus_dir / "data")
    papers = await build_database(corpus_dir / "papers.lancedb", "papers", PAPERS, embedder, config)
    wiki = await build_database(corpus_dir / "wiki.lancedb", "wiki", WIKI, embedder, config)
    return {
        "papers": corpus_dir / "papers.lancedb",
        "wiki": corpus_dir / "wiki.lancedb",
        "papers_docs": papers,
        "wiki_docs": wiki,
    }


@pytest.fixture(scope="session")
async def papers_tagged(built, corpus_dir, embedder) -> dict:
    """A copy of papers tagged r1, then given a fourth document (live: 4, at r1: 3)."""
    from haiku.core.scope import DatabaseRef
    from haiku.core.store import Store

    path = copy_database(built["papers"], corpus_dir / "papers-tagged.lancedb")
    config = build_config(corpus_dir / "data")
    store = await Store.open(DatabaseRef.configured("papers", path), config)
    try:
        await store.tags.create_tag("r1")
        extra = await add_document(store, embedder, *EXTRA)
    finally:
        await store.close()
    return {"path": path, "extra": extra}


async def _recorded_as(source: Path, target: Path, corpus_dir: Path, **identity) -> Path:
    from haiku.core.embedders import EmbedderIdentity
    from haiku.core.scope import DatabaseRef
    from haiku.core.store import Store

    path = copy_database(source, target)
    store = await Store.open(DatabaseRef.at(path), build_config(corpus_dir / "data"), skip_validation=True)
    try:
        await store.writer().rebuild.record_identity(EmbedderIdentity(**identity))
    finally:
        await store.close()
    return path


@pytest.fixture(scope="session")
async def wiki_other_model(built, corpus_dir) -> Path:
    """A copy of wiki recording another model name at the same dimension."""
    return await _recorded_as(
        built["wiki"], corpus_dir / "wiki-other-model.lancedb", corpus_dir,
        provider="sentence-transformers", model="other-model", vector_dim=384,
    )


@pytest.fixture(scope="session")
async def wiki_other_dim(built, corpus_dir) -> Path:
    """A copy of wiki recording a 512-dimensional embedder."""
    return await _recorded_as(
        built["wiki"], corpus_dir / "wiki-other-dim.lancedb", corpus_dir,
        provider="sentence-transformers", model="all-MiniLM-L6-v2", vector_dim=512,
    )


@pytest.fixture
def two_db(built, tmp_path):
    """A configuration naming papers and wiki, in that order."""
    return build_config(tmp_path / "data", {"papers": str(built["papers"]), "wiki": str(built["wiki"])})


@pytest.fixture
def open_log(monkeypatch):
    """Every database open, by name, through the client's test hook."""
    from haiku.rag.client import _opening

    opened: list[str | None] = []

    async def record(ref):
        opened.append(ref.name)

    monkeypatch.setattr(_opening, "before_open", record)
    return opened
