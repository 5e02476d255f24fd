"""Opening one database: existence, creation, identity checks, and how failures are named (docs/storage.md, docs/configuration.md)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from haiku.core.embedders import EmbedderDriftWarning
from haiku.core.errors import ConfigMismatchError, ReadOnlyError, SourceUnavailableError
from haiku.core.scope import DatabaseRef, DatabaseScope
from haiku.core.store import Store, current_schema_version
from haiku.rag.cli._hints import error_text


def ref_of(config, name: str) -> DatabaseRef:
    return DatabaseScope.resolve(config, database_name=name).databases[0]


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_mtime_ns, p.stat().st_size)
        for p in root.rglob("*")
        if p.is_file() and not p.name.endswith(".lock")
    }


async def test_missing_configured_database_raises_source_unavailable_naming_it_and_creates_nothing(
    db_config, tmp_path
):
    config = db_config("papers")
    with pytest.raises(SourceUnavailableError) as caught:
        await Store.open(ref_of(config, "papers"), config)
    message = str(caught.value)
    assert "'papers'" in message and "create it by opening it with create=True" in message and str(tmp_path) not in message
    assert not (tmp_path / "papers.lancedb").exists()


async def test_missing_configured_database_read_only_creates_nothing(db_config, tmp_path):
    config = db_config("papers")
    with pytest.raises(SourceUnavailableError):
        await Store.open(ref_of(config, "papers"), config, read_only=True)
    assert not (tmp_path / "papers.lancedb").exists()


async def test_empty_directory_counts_as_missing(db_config, tmp_path):
    config = db_config("papers")
    (tmp_path / "papers.lancedb").mkdir()
    with pytest.raises(SourceUnavailableError, match="does not exist"):
        await Store.open(ref_of(config, "papers"), config)


async def test_missing_given_path_raises_file_not_found_with_absolute_path(
    make_config, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    config = make_config()
    with pytest.raises(FileNotFoundError) as caught:
        await Store.open(DatabaseRef.at("sub/foo.lancedb"), config)
    assert str(tmp_path / "sub" / "foo.lancedb") in str(caught.value)
    assert not (tmp_path / "sub").exists()


async def test_create_true_creates_parents_and_stamps_settings(db_config, tmp_path):
    config = db_config("papers")
    nested = DatabaseRef.configured("papers", tmp_path / "a" / "b" / "papers.lancedb")
    store = await Store.open(nested, config, create=True)
    try:
        assert store.created
        assert store.schema_version == current_schema_version()
        assert store.identity is not None and store.identity.to_dict() == {
            "provider": "sentence-transformers",
            "model": "all-MiniLM-L6-v2",
            "vector_dim": 384,
        }
        assert store.vector_dim == 384
    finally:
        await store.close()
    assert await Store.exists(nested, config)


async def test_create_true_on_an_existing_database_opens_it_without_recreating(db_config):
    config = db_config("papers")
    ref = ref_of(config, "papers")
    await (await Store.open(ref, config, create=True)).close()
    store = await Store.open(ref, config, create=True)
    try:
        assert not store.created
    finally:
        await store.close()


async def test_create_on_a_read_only_open_raises_read_only_error_naming_the_database(db_config, tmp_path):
    config = db_config("papers")
    with pytest.raises(ReadOnlyError, match="'papers'"):
        await Store.open(ref_of(config, "papers"), config, create=True, read_only=True)
    assert not (tmp_path / "papers.lancedb").exists()


async def test_unexpected_open_failure_of_configured_database_carries_no_chain_or_location(
    db_config, tmp_path
):
    config = db_config("wiki")
    (tmp_path / "wiki.lancedb" / "settings.lance").mkdir(parents=True)  # a broken database
    with pytest.raises(SourceUnavailableError) as caught:
        await Store.open(ref_of(config, "wiki"), config)
    error = caught.value
    assert str(error).startswith("database 'wiki' could not be opened: ")
    assert str(tmp_path) not in str(error)
    assert error.__cause__ is None and error.__context__ is None


async def test_unexpected_open_failure_of_given_path_propagates_unchanged(make_config, tmp_path):
    (tmp_path / "foo.lancedb" / "settings.lance").mkdir(parents=True)
    with pytest.raises(Exception) as caught:
        await Store.open(DatabaseRef.at(tmp_path / "foo.lancedb"), make_config())
    assert not isinstance(caught.value, SourceUnavailableError)


async def test_recorded_dimension_differing_from_config_raises_config_mismatch_even_read_only(db_config):
    config = db_config("wiki")
    ref = ref_of(config, "wiki")
    await (await Store.open(ref, config, create=True)).close()
    other = db_config("wiki", embeddings={"model": {"name": "bigger", "vector_dim": 768}})
    with pytest.raises(ConfigMismatchError) as caught:
        await Store.open(ref, other, read_only=True)
    assert "'wiki'" in str(caught.value) and "rebuild the database" in str(caught.value)
    assert "haiku-ingester rebuild --db-name wiki" in error_text(caught.value)


async def test_model_change_at_same_dimension_warns_read_only_and_search_works(
    db_config, write_doc, fake_embed
):
    config = db_config("wiki")
    ref = ref_of(config, "wiki")
    writer = await Store.open(ref, config, create=True)
    await write_doc(writer, "file:///a.md", "alpha beta gamma")
    await writer.close()
    drifted = db_config("wiki", embeddings={"model": {"name": "other-model", "vector_dim": 384}})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        store = await Store.open(ref, drifted, read_only=True)
    try:
        assert any(issubclass(w.category, EmbedderDriftWarning) for w in caught)
        results = await store.search("alpha", query_vector=fake_embed("alpha"), search_type="vector")
        assert [r.content for r in results] == ["alpha beta gamma"]
    finally:
        await store.close()


async def test_model_change_at_same_dimension_raises_on_writable_open_naming_database(db_config):
    config = db_config("wiki")
    ref = ref_of(config, "wiki")
    await (await Store.open(ref, config, create=True)).close()
    drifted = db_config("wiki", embeddings={"model": {"name": "other-model", "vector_dim": 384}})
    with pytest.raises(ConfigMismatchError, match="'wiki'"):
        await Store.open(ref, drifted)


async def test_skip_validation_skips_the_identity_check(db_config):
    config = db_config("wiki")
    ref = ref_of(config, "wiki")
    await (await Store.open(ref, config, create=True)).close()
    other = db_config("wiki", embeddings={"model": {"name": "bigger", "vector_dim": 768}})
    store = await Store.open(ref, other, skip_validation=True)
    assert store.vector_dim == 384
    await store.close()


async def test_open_and_close_without_writes_writes_nothing(db_config, tmp_path):
    config = db_config("papers")
    ref = ref_of(config, "papers")
    await (await Store.open(ref, config, create=True)).close()
    before = snapshot(tmp_path / "papers.lancedb")
    store = await Store.open(ref, config)
    await store.reads.count_documents()
    await store.close()
    assert snapshot(tmp_path / "papers.lancedb") == before


async def test_location_without_scheme_separator_opens_as_a_local_path(db_config, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = db_config("odd", lancedb={"databases": {"odd": "s3:odd.lancedb"}})
    ref = ref_of(config, "odd")
    assert isinstance(ref.location, Path)
    store = await Store.open(ref, config, create=True)
    await store.close()
    assert (tmp_path / "s3:odd.lancedb" / "settings.lance").is_dir()


async def test_close_is_idempotent_and_a_closed_store_refuses_reads(db_config):
    config = db_config("papers")
    store = await Store.open(ref_of(config, "papers"), config, create=True)
    await store.close()
    await store.close()
    with pytest.raises(RuntimeError, match="closed"):
        await store.reads.count_documents()


async def test_read_only_store_refuses_document_writes(db_config, write_doc):
    config = db_config("papers")
    ref = ref_of(config, "papers")
    await (await Store.open(ref, config, create=True)).close()
    store = await Store.open(ref, config, read_only=True)
    try:
        with pytest.raises(ReadOnlyError, match="'papers'"):
            await write_doc(store, "file:///a.md", "text")
    finally:
        await store.close()
