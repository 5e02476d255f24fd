"""Tags, reading at a tag, restore, history, and vacuum keeping tagged versions (docs/storage.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from haiku.core.errors import ReadOnlyError, TagError
from haiku.core.scope import DatabaseRef, DatabaseScope
from haiku.core.store import Store


@pytest.fixture
async def env(db_config, write_doc):
    """A database with document a tagged r1, then document b written after the tag."""
    config = db_config("wiki")
    ref = DatabaseScope.resolve(config).databases[0]
    store = await Store.open(ref, config, create=True)
    await write_doc(store, "file:///a.md", "alpha words here")
    await store.tags.create_tag("r1")
    await write_doc(store, "file:///b.md", "beta words there")
    yield config, ref, store
    await store.close()


async def titles(store) -> list[str]:
    return [d.uri for d in await store.reads.list_documents()]


async def test_creating_an_existing_tag_raises_already_exists(env):
    _, _, store = env
    with pytest.raises(TagError, match="already exists"):
        await store.tags.create_tag("r1")


async def test_deleting_a_missing_tag_raises_does_not_exist(env):
    _, _, store = env
    with pytest.raises(TagError, match="does not exist"):
        await store.tags.delete_tag("nope")


async def test_a_tag_covers_every_table_and_is_listed(env):
    _, _, store = env
    [info] = await store.tags.list_tags()
    assert info.name == "r1" and info.complete
    assert set(info.versions) == {"documents", "chunks", "document_items", "page_images", "picture_vectors", "settings"}


async def test_delete_tag_removes_it_from_every_table(env):
    _, _, store = env
    await store.tags.delete_tag("r1")
    assert await store.tags.list_tags() == []


async def test_reading_at_a_tag_is_read_only_and_sees_only_the_tagged_documents(env, fake_embed):
    config, ref, _ = env
    snapshot = await Store.open(ref, config, tag="r1")
    try:
        assert snapshot.read_only and snapshot.tag == "r1"
        assert await titles(snapshot) == ["file:///a.md"]
        hits = await snapshot.search("words", query_vector=fake_embed("words"), search_type="hybrid", limit=5)
        assert [h.document_uri for h in hits] == ["file:///a.md"]
        with pytest.raises(ReadOnlyError):
            await snapshot.vacuum()
        with pytest.raises(ReadOnlyError):
            await snapshot.tags.create_tag("r2")
    finally:
        await snapshot.close()


async def test_a_configured_tagged_entry_reads_at_its_tag(env, db_config, tmp_path):
    config = db_config(
        lancedb={
            "databases": {
                "wiki": str(tmp_path / "wiki.lancedb"),
                "wiki-r1": {"location": str(tmp_path / "wiki.lancedb"), "tag": "r1"},
            }
        }
    )
    ref = DatabaseScope.resolve(config, database_name="wiki-r1").databases[0]
    snapshot = await Store.open(ref, config)
    try:
        assert snapshot.read_only and await titles(snapshot) == ["file:///a.md"]
    finally:
        await snapshot.close()


async def test_opening_at_an_absent_tag_raises_tag_error_naming_tag_and_database(env):
    config, ref, _ = env
    with pytest.raises(TagError) as caught:
        await Store.open(ref, config, tag="missing-tag")
    assert "'missing-tag'" in str(caught.value) and str(caught.value).startswith("database 'wiki': ")


async def test_a_partial_tag_cannot_be_read_or_restored_only_deleted(env):
    config, ref, store = env
    table = store.table("chunks")
    await table.tags.create("half", await table.version())
    [half] = [t for t in await store.tags.list_tags() if t.name == "half"]
    assert half.missing == ["documents", "settings"] and not half.complete
    with pytest.raises(TagError, match="partial"):
        await Store.open(ref, config, tag="half")
    with pytest.raises(TagError, match="partial"):
        await store.tags.restore_tag("half")
    with pytest.raises(TagError, match="delete it first"):
        await store.tags.create_tag("half")
    await store.tags.delete_tag("half")
    assert [t.name for t in await store.tags.list_tags()] == ["r1"]


async def test_restore_keeps_a_safety_tag_and_brings_back_the_tagged_state(env, write_doc):
    config, ref, store = env
    safety = await store.tags.restore_tag("r1")
    assert re.fullmatch(r"before-restore-\d{8}T\d{6}Z", safety)
    assert {t.name for t in await store.tags.list_tags()} == {"r1", safety}
    assert await titles(store) == ["file:///a.md"]
    reopened = await Store.open(ref, config, read_only=True)
    try:
        assert await titles(reopened) == ["file:///a.md"]
        assert await reopened.reads.count_chunks() == 1
    finally:
        await reopened.close()
    at_safety = await Store.open(ref, config, tag=safety)
    try:
        assert await titles(at_safety) == ["file:///a.md", "file:///b.md"]
    finally:
        await at_safety.close()


async def test_a_second_restore_within_one_second_gets_a_numbered_safety_tag(env):
    _, _, store = env
    first = await store.tags.restore_tag("r1")
    second = await store.tags.restore_tag("r1")
    assert second != first and re.fullmatch(r"before-restore-\d{8}T\d{6}Z(-\d+)?", second)


async def test_vacuum_with_zero_retention_keeps_the_tagged_version_readable(env, write_doc, fake_embed):
    config, ref, store = env
    await write_doc(store, "file:///a.md", "alpha rewritten")  # replaces r1's chunks in the live state
    assert await store.vacuum(retention_seconds=0) is not None
    history = await store.tags.history(table="chunks")
    assert any("r1" in entry.tags for entry in history["chunks"])
    snapshot = await Store.open(ref, config, tag="r1")
    try:
        [chunk] = await snapshot.reads.get_chunks((await snapshot.reads.get_document_by_uri("file:///a.md")).id)
        assert chunk.content == "alpha words here"
        hits = await snapshot.search("alpha", query_vector=fake_embed("alpha"), search_type="hybrid")
        assert [h.content for h in hits] == ["alpha words here"]
    finally:
        await snapshot.close()


async def test_vacuum_with_zero_retention_drops_untagged_old_versions_and_says_how_many(env):
    _, _, store = env
    before = await store.tags.history()
    report = await store.vacuum(retention_seconds=0)
    everything = await store.tags.history()
    after = everything["documents"]
    assert len(after) < len(before["documents"])
    # every version gone from the history is counted (so are the ones vacuum's own compaction made)
    dropped = sum(len({e.version for e in before[t]} - {e.version for e in everything[t]}) for t in before)
    assert report.versions_removed >= dropped > 0 and report.bytes_removed > 0
    assert after[0].version >= before["documents"][0].version


async def test_history_lists_versions_newest_first_with_tags(env):
    _, _, store = env
    history = await store.tags.history()
    assert set(history) == {"documents", "chunks", "document_items", "page_images", "picture_vectors", "settings"}
    versions = [e.version for e in history["documents"]]
    assert versions == sorted(versions, reverse=True)
    assert any(e.tags == ["r1"] for e in history["settings"])
    assert all(e.timestamp.tzinfo is not None for e in history["chunks"])
    assert len((await store.tags.history(table="chunks", limit=2))["chunks"]) == 2


async def test_history_returns_its_notices_with_the_versions_and_keeps_none_on_the_store(env):
    _, ref, store = env
    (tag_file,) = (Path(ref.location) / "chunks.lance" / "_refs" / "tags").glob("*.json")
    tag_file.write_text("{not json", encoding="utf-8")
    broken = await store.tags.history(table="chunks")
    assert len(broken.notices) == 1 and "tags of table chunks could not be read" in broken.notices[0]
    assert broken["chunks"] and all(e.tags == [] for e in broken["chunks"])
    # Each call says only what it met: a table whose tags read fine comes with no notice.
    assert (await store.tags.history(table="settings")).notices == []
    assert not hasattr(store, "history_notices")


async def test_history_of_an_unknown_table_lists_the_valid_ones(env):
    _, _, store = env
    with pytest.raises(ValueError, match="chunks, document_items, documents, page_images, picture_vectors, settings"):
        await store.tags.history(table="nope")


async def test_tag_on_a_given_path_database(tmp_path, make_config, write_doc):
    ref = DatabaseRef.at(tmp_path / "solo.lancedb")
    config = make_config()
    store = await Store.open(ref, config, create=True)
    await write_doc(store, "file:///x.md", "x")
    info = await store.tags.create_tag("v1")
    await store.close()
    assert info.complete
    snapshot = await Store.open(ref, config, tag="v1")
    assert await titles(snapshot) == ["file:///x.md"]
    await snapshot.close()


async def test_a_failed_restore_rolls_back_and_names_the_safety_tag(env, monkeypatch):
    config, ref, store = env

    async def broken_restore(*args, **kwargs):
        raise OSError("disk went away")

    monkeypatch.setattr(store.table("documents"), "restore", broken_restore)
    with pytest.raises(TagError) as caught:
        await store.tags.restore_tag("r1")
    message = str(caught.value)
    assert "rolled back" in message and re.search(r"before-restore-\d{8}T\d{6}Z", message)
    monkeypatch.undo()
    reopened = await Store.open(ref, config, read_only=True)
    try:
        assert await titles(reopened) == ["file:///a.md", "file:///b.md"]
        assert await reopened.reads.count_chunks() == 2  # chunks were restored to r1, then rolled back
    finally:
        await reopened.close()
