"""Schema version 3: the structure tables and columns, the processing identity, and its migration (docs/storage.md)."""

from __future__ import annotations

import lancedb
import pytest

from haiku.core.errors import MigrationRequiredError, ReadOnlyError
from haiku.core.scope import DatabaseScope
from haiku.core.store import Store, current_schema_version
from support import as_schema_version

IDENTITY = {"converter": "docling 2", "chunker": {"chunk_size": 256}, "page_images": True}


@pytest.fixture
def wiki(db_config):
    config = db_config("wiki")
    return config, DatabaseScope.resolve(config).databases[0]


@pytest.fixture
async def old_wiki(wiki, write_doc):
    """A database as the code of schema version 2 left it, holding one document of two chunks."""
    config, ref = wiki
    store = await Store.open(ref, config, create=True)
    await write_doc(store, "file:///a.md", "alpha text", "beta text")
    await store.close()
    await as_schema_version(ref.location, 2)
    return config, ref


async def columns(location, table: str) -> list[str]:
    db = await lancedb.connect_async(str(location))
    try:
        return (await (await db.open_table(table)).schema()).names
    finally:
        db.close()


async def test_a_new_database_is_created_at_version_3_with_the_structure_tables(wiki):
    config, ref = wiki
    store = await Store.open(ref, config, create=True)
    try:
        assert store.schema_version == current_schema_version() == 4
        assert store.processing_identity is None
    finally:
        await store.close()
    assert {"docling_document", "docling_version", "structure_revision", "structure_digest"} <= set(
        await columns(ref.location, "documents")
    )
    assert {"item_refs", "boxes"} <= set(await columns(ref.location, "chunks"))
    assert "image" in await columns(ref.location, "document_items")
    assert {"page", "width", "height", "scale", "png"} <= set(await columns(ref.location, "page_images"))
    assert "processing" in await columns(ref.location, "settings")


async def test_the_processing_identity_is_recorded_once_and_survives_reopening(wiki, write_doc):
    config, ref = wiki
    store = await Store.open(ref, config, create=True)
    try:
        await write_doc(store, "file:///a.md", "alpha text")
        await store.writer().processing.record(IDENTITY)
        assert store.processing_identity == IDENTITY
    finally:
        await store.close()
    reader = await Store.open(ref, config, read_only=True)
    try:
        assert reader.processing_identity == IDENTITY
        assert reader.identity is not None  # the embedder identity beside it is kept
        with pytest.raises(ReadOnlyError):
            await reader.writer().processing.record({"other": 1})
    finally:
        await reader.close()


async def test_a_version_2_database_migrates_to_version_3_keeping_its_documents(old_wiki, write_doc):
    config, ref = old_wiki
    with pytest.raises(MigrationRequiredError, match="from 2 to 4"):
        await Store.open(ref, config, read_only=True)
    store = await Store.open(ref, config, skip_validation=True)
    try:
        assert [line.split(":")[0] for line in await store.migrator.migrate()] == ["3", "4"]
        assert store.schema_version == 4 and store.processing_identity is None
        document = await store.reads.get_document_by_uri("file:///a.md")
        assert [c.content for c in await store.reads.get_chunks(document.id)] == ["alpha text", "beta text"]
        assert [r.content for r in await store.search("beta", search_type="fts", limit=5)] == ["beta text"]
        assert not await store.structure.has_structure(document.id)  # written before the step
        await write_doc(store, "file:///a.md", "gamma text")  # an update after the migration
        assert [c.content for c in await store.reads.get_chunks(document.id)] == ["gamma text"]
        await store.writer().processing.record(IDENTITY)
    finally:
        await store.close()
    reopened = await Store.open(ref, config, read_only=True)
    try:
        assert reopened.migrator.pending_migrations() == [] and reopened.processing_identity == IDENTITY
        assert set((await reopened.report.info()).table_versions) == {
            "documents", "chunks", "document_items", "page_images", "picture_vectors", "settings",
        }  # fmt: skip
    finally:
        await reopened.close()


async def test_a_tag_taken_before_the_migration_still_reads_read_only(old_wiki, write_doc):
    config, ref = old_wiki
    old = await Store.open(ref, config, skip_validation=True)
    await old.tags.create_tag("before")  # taken by the version 2 layout: three tables
    await old.migrator.migrate()
    await write_doc(old, "file:///b.md", "gamma text")
    await old.close()

    snapshot = await Store.open(ref, config, tag="before")
    try:
        assert snapshot.read_only and snapshot.schema_version == 2
        assert [d.uri for d in await snapshot.reads.list_documents()] == ["file:///a.md"]
        [document] = await snapshot.reads.list_documents()
        assert [c.content for c in await snapshot.reads.get_chunks(document.id)] == ["alpha text", "beta text"]
        assert [r.content for r in await snapshot.search("alpha", search_type="fts", limit=5)] == ["alpha text"]
        assert not snapshot.handles.structured
        assert not await snapshot.structure.has_structure(document.id)
        assert await snapshot.structure.get_document_items(document.id) == []
        assert await snapshot.structure.get_page_images(document.id, [1]) == {}
    finally:
        await snapshot.close()
    live = await Store.open(ref, config)
    try:
        [info] = await live.tags.list_tags()
        assert info.name == "before" and info.complete and set(info.versions) == {"documents", "chunks", "settings"}
    finally:
        await live.close()


async def test_restoring_a_tag_from_before_the_migration_asks_for_it_again(old_wiki):
    config, ref = old_wiki
    store = await Store.open(ref, config, skip_validation=True)
    try:
        await store.tags.create_tag("before")
        await store.migrator.migrate()
        await store.tags.restore_tag("before")
        assert store.schema_version == 2 and not store.handles.structured
    finally:
        await store.close()
    with pytest.raises(MigrationRequiredError, match="from 2 to 4"):
        await Store.open(ref, config, read_only=True)
    store = await Store.open(ref, config, skip_validation=True)
    try:
        assert [line.split(":")[0] for line in await store.migrator.migrate()] == ["3", "4"]
        [document] = await store.reads.list_documents()
        assert [c.content for c in await store.reads.get_chunks(document.id)] == ["alpha text", "beta text"]
    finally:
        await store.close()
