"""rebuild after the configured model changed."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from ingester_support import EncoderCount, run_cli

from haiku.core.config import config_from_dict
from haiku.core.convert import embed_text
from haiku.core.embedders import EmbedderIdentity, local_model_path
from haiku.core.scope import DatabaseRef
from support import copy_database, write_config

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
async def rebuilt(batch_world, tmp_path_factory):
    """A copy of an ingested database, its vectors wiped, rebuilt under a new model name.

    The new name is the model's directory: a different identity, the same weights, no network.
    """
    from haiku.core.store import Store

    root = tmp_path_factory.mktemp("rebuild")
    location = copy_database(batch_world.a_db, root / "a.lancedb")
    raw = yaml.safe_load(batch_world.config.read_text())
    raw["storage"]["data_dir"] = str(root / "data")
    raw["lancedb"]["databases"] = {"a": str(location)}
    raw["ingester"]["databases"] = {"a": raw["ingester"]["databases"]["a"]}
    raw["embeddings"] = {"model": {"provider": "sentence-transformers", "name": local_model_path(), "vector_dim": 384}}
    config_path = root / "cfg.yaml"
    write_config(config_path, raw)
    config = config_from_dict(raw)

    ref = DatabaseRef.configured("a", location)
    store = await Store.open(ref, config, skip_validation=True)
    try:
        ids = [c.id async for batch in store.writer().rebuild.iter_chunk_batches() for c in batch]
        await store.writer().rebuild.replace_vectors({chunk_id: [0.0] * 384 for chunk_id in ids})
    finally:
        await store.close()

    before = run_cli(["run-batch"], config=config_path)
    result = run_cli(["rebuild", "--db-name", "a"], config=config_path)
    store = await Store.open(ref, config)  # writable, with the identity check
    try:
        chunks = [c async for batch in store.writer().rebuild.iter_chunk_batches(with_vectors=True) for c in batch]
        facts = {
            "before": before,
            "result": result,
            "identity": store.identity,
            "marker": store.rebuild_marker,
            "chunks": chunks,
            "count": await store.reads.count_chunks(),
        }
    finally:
        await store.close()
    return facts


def test_a_changed_model_name_is_refused_before_the_rebuild(rebuilt):
    before = rebuilt["before"]
    assert before.returncode == 1 and "haiku-ingester rebuild --db-name a" in before.stderr


def test_rebuild_reports_every_chunk_re_embedded(rebuilt):
    result = rebuilt["result"]
    assert result.returncode == 0 and f": {rebuilt['count']} chunk(s) re-embedded" in result.stdout


def test_rebuild_records_the_new_identity_and_the_next_writable_open_accepts_it(rebuilt):
    assert rebuilt["identity"] == EmbedderIdentity("sentence-transformers", local_model_path(), 384)


def test_every_rebuilt_vector_is_the_embedding_of_its_chunk(rebuilt, embedder):
    chunks = rebuilt["chunks"]
    expected = np.array(embedder.encode([embed_text(c.headings, c.content) for c in chunks]))
    assert np.allclose(np.array([c.vector for c in chunks]), expected, atol=1e-4)


def test_a_finished_rebuild_leaves_no_marker(rebuilt):
    assert rebuilt["marker"] is None


def copy_of_a(batch_world, root):
    """Database a of the batch world copied under ``root``, with a config naming only it (same embedder)."""
    location = copy_database(batch_world.a_db, root / "a.lancedb")
    raw = yaml.safe_load(batch_world.config.read_text())
    raw["storage"]["data_dir"] = str(root / "data")
    raw["lancedb"]["databases"] = {"a": str(location)}
    raw["ingester"]["databases"] = {"a": raw["ingester"]["databases"]["a"]}
    config_path = root / "cfg.yaml"
    write_config(config_path, raw)
    return config_path, config_from_dict(raw), DatabaseRef.configured("a", location)


async def test_rebuild_with_the_embedder_unchanged_embeds_nothing(batch_world, tmp_path, embedder):
    from haiku.ingester.rebuild import rebuild

    _, config, _ = copy_of_a(batch_world, tmp_path)
    with EncoderCount(embedder) as count:
        report = await rebuild(config, "a")
    assert (report.unchanged, report.chunks, count.texts) == (True, 0, 0)


def test_rebuild_says_nothing_was_re_embedded_when_the_embedder_is_unchanged(batch_world, tmp_path):
    config_path, _, _ = copy_of_a(batch_world, tmp_path)
    result = run_cli(["rebuild", "--db-name", "a"], config=config_path)
    assert result.returncode == 0 and "already holds vectors of" in result.stdout
    assert ": 0 chunk(s) re-embedded" in result.stdout


async def test_rebuild_back_to_the_recorded_embedder_after_an_interrupted_one_embeds_everything(
    batch_world, tmp_path, embedder
):
    """An interrupted rebuild to another model left some vectors of that model: all are embedded again."""
    from haiku.core.store import Store
    from haiku.ingester.rebuild import rebuild

    _, config, ref = copy_of_a(batch_world, tmp_path)
    store = await Store.open(ref, config)
    try:
        total = await store.reads.count_chunks()
        other = EmbedderIdentity("sentence-transformers", "another-model", 384)
        await store.writer().rebuild.set_rebuild_marker({"to": other.to_dict(), "from": store.identity.to_dict(), "started_at": "x"})
    finally:
        await store.close()
    with EncoderCount(embedder) as count:
        report = await rebuild(config, "a")
    store = await Store.open(ref, config)
    try:
        marker = store.rebuild_marker
    finally:
        await store.close()
    assert (report.unchanged, report.chunks, count.texts, marker) == (False, total, total, None)
