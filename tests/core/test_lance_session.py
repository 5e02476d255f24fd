"""LanceDB's caches are bounded per process (docs/storage.md, "Memory").

Every write is a new version whose manifest, fragments and refreshed indexes
enter LanceDB's caches; unbounded (the library's 6 GiB and 1 GiB defaults) a
long-running writer grows with every write. The store's connections share one
session bounded by ``lancedb.index_cache_mb`` and ``lancedb.metadata_cache_mb``.
"""

from __future__ import annotations

import random

from haiku.core.config import AppConfig
from haiku.core.lance_session import MIB, lance_session
from haiku.core.models import Chunk, Document
from haiku.core.scope import DatabaseRef
from haiku.core.store import Store


async def test_writes_fill_the_process_session_only_up_to_its_configured_bounds(tmp_path):
    config = AppConfig.model_validate({"lancedb": {"index_cache_mb": 1, "metadata_cache_mb": 1}})
    session = lance_session(config)
    rng = random.Random(7)
    peak = 0
    for location in (tmp_path / "one.lancedb", tmp_path / "two.lancedb"):  # two databases, one session
        store = await Store.open(DatabaseRef.configured(location.stem, location), config, create=True)
        try:
            for n in range(25):
                chunks = [Chunk(order=k, content=f"version {n} chunk {k} " + "word " * 40) for k in range(3)]
                vectors = [[rng.random() for _ in range(store.vector_dim)] for _ in chunks]
                await store.writer().documents.upsert_documents([(Document(uri=f"file:///notes/{n % 5}.md", content=f"v{n}"), chunks, vectors)])
                peak = max(peak, session.size_bytes)
        finally:
            await store.close()
    assert 1 * MIB < peak <= 2 * MIB


def test_the_same_bounds_give_the_same_session_and_the_defaults_are_bounded():
    default = AppConfig()
    assert lance_session(default) is lance_session(AppConfig())
    assert (default.lancedb.index_cache_mb, default.lancedb.metadata_cache_mb) == (256, 64)
