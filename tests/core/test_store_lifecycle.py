"""Migrations, the vector index, vacuum and info (docs/storage.md)."""

from __future__ import annotations

import asyncio

import pytest
from structlog.testing import capture_logs

from haiku.core.errors import MigrationRequiredError, ReadOnlyError
from haiku.core.models import Chunk, Document
from haiku.core.scope import DatabaseScope
from haiku.core.store import Migration, Store, current_schema_version, maintenance, migrations
from haiku.rag.cli._hints import error_text
from support import as_schema_version

# The schema version this code stamps; the tests' steps come after it.
BASE = current_schema_version()


@pytest.fixture
def registered_steps():
    """Register migration steps for one test; the registry is restored afterwards."""
    saved = list(migrations.MIGRATIONS)
    applied: list[int] = []

    def register(version: int, description: str = "add a thing", fail: bool = False) -> None:
        async def apply(store: Store) -> None:
            if fail:
                raise RuntimeError(f"step {version} broke")
            applied.append(version)

        migrations.MIGRATIONS.append(Migration(version, description, apply))

    register.applied = applied  # type: ignore[attr-defined]
    yield register
    migrations.MIGRATIONS[:] = saved


@pytest.fixture
def wiki(db_config):
    config = db_config("wiki")
    return config, DatabaseScope.resolve(config).databases[0]


async def create(config, ref) -> None:
    await (await Store.open(ref, config, create=True)).close()


# --- migrations --------------------------------------------------------------------------------------


async def test_a_pending_step_makes_read_only_and_writable_opens_raise_naming_the_database(
    wiki, registered_steps
):
    config, ref = wiki
    await create(config, ref)
    registered_steps(BASE + 1, "add language column")
    for read_only in (True, False):
        with pytest.raises(MigrationRequiredError) as caught:
            await Store.open(ref, config, read_only=read_only)
        message = str(caught.value)
        assert message.startswith("database 'wiki': ")
        assert (
            f"from {BASE} to {BASE + 1}" in message
            and "1 migration(s) pending" in message
            and "Migrate it (store.migrator.migrate()) to upgrade." in message
        )
        assert error_text(caught.value).endswith("1 migration(s) pending. Run 'haiku-rag migrate' to upgrade.")


async def test_a_version_1_database_is_migrated_to_revisions_and_its_documents_stay_readable(
    wiki, write_doc, fake_embed
):
    config, ref = wiki
    store = await Store.open(ref, config, create=True)
    await write_doc(store, "file:///a.md", "alpha text", "beta text")
    await store.close()
    await as_schema_version(ref.location, 1)
    with pytest.raises(MigrationRequiredError, match="from 1 to 4"):
        await Store.open(ref, config, read_only=True)
    store = await Store.open(ref, config, skip_validation=True)
    try:
        assert [line.split(":")[0] for line in await store.migrator.migrate()] == ["2", "3", "4"]
        document = await store.reads.get_document_by_uri("file:///a.md")
        assert [c.content for c in await store.reads.get_chunks(document.id)] == ["alpha text", "beta text"]
        found = await store.search("alpha", search_type="fts", limit=5)
        assert [r.content for r in found] == ["alpha text"]
        await write_doc(store, "file:///a.md", "gamma text")  # an update after the migration
        assert [c.content for c in await store.reads.get_chunks(document.id)] == ["gamma text"]
        assert await store.reads.count_chunks() == 1
    finally:
        await store.close()


async def test_info_lists_pending_steps_and_migrate_applies_them_once(wiki, registered_steps):
    config, ref = wiki
    await create(config, ref)
    registered_steps(BASE + 1, "add language column")
    store = await Store.open(ref, config, skip_validation=True)
    try:
        info = await store.report.info()
        assert info.pending_migrations == [{"version": BASE + 1, "description": "add language column"}]
        assert await store.migrator.migrate() == [f"{BASE + 1}: add language column"]
        assert await store.migrator.migrate() == []
        assert registered_steps.applied == [BASE + 1]
    finally:
        await store.close()
    reopened = await Store.open(ref, config, read_only=True)
    assert reopened.schema_version == BASE + 1 and reopened.migrator.pending_migrations() == []
    await reopened.close()


async def test_steps_apply_in_ascending_order_and_a_failure_keeps_the_version_reached(wiki, registered_steps):
    config, ref = wiki
    await create(config, ref)
    registered_steps(BASE + 2, "third", fail=True)
    registered_steps(BASE + 1, "second")
    store = await Store.open(ref, config, skip_validation=True)
    try:
        with pytest.raises(RuntimeError, match=f"step {BASE + 2} broke"):
            await store.migrator.migrate()
        assert registered_steps.applied == [BASE + 1]
        assert store.migrator.pending_migrations() == [(BASE + 2, "third")]
    finally:
        await store.close()


async def test_migrate_on_a_read_only_store_raises_read_only_error(wiki, registered_steps):
    config, ref = wiki
    await create(config, ref)
    registered_steps(BASE + 1)
    store = await Store.open(ref, config, read_only=True, skip_validation=True)
    try:
        with pytest.raises(ReadOnlyError):
            await store.migrator.migrate()
    finally:
        await store.close()


async def test_a_new_database_gets_the_current_schema_version(wiki, registered_steps):
    config, ref = wiki
    registered_steps(BASE + 4)
    store = await Store.open(ref, config, create=True)
    assert store.schema_version == current_schema_version() == BASE + 4
    await store.close()


async def test_a_tag_taken_before_a_migration_cannot_be_read(wiki, registered_steps):
    config, ref = wiki
    store = await Store.open(ref, config, create=True)
    await store.tags.create_tag("old")
    await store.close()
    registered_steps(BASE + 1)
    store = await Store.open(ref, config, skip_validation=True)
    await store.migrator.migrate()
    await store.close()
    with pytest.raises(MigrationRequiredError, match="copy"):
        await Store.open(ref, config, tag="old")


async def test_a_database_stamped_newer_than_the_code_opens_with_a_warning(wiki, registered_steps):
    config, ref = wiki
    registered_steps(BASE + 1)
    await create(config, ref)
    migrations.MIGRATIONS.clear()
    with capture_logs() as logs:
        store = await Store.open(ref, config, read_only=True)
    await store.close()
    assert any(
        entry["event"] == "store.schema_newer_than_code" and entry["log_level"] == "warning" for entry in logs
    )


# --- vector index ------------------------------------------------------------------------------------


async def test_create_index_below_256_chunks_returns_false_and_creates_nothing(wiki, write_doc):
    config, ref = wiki
    store = await Store.open(ref, config, create=True)
    try:
        await write_doc(store, "file:///a.md", "one", "two")
        with capture_logs() as logs:
            assert await store.indexes.create_index() is False
        # the caller words the warning (the CLI's `Warning:` line); the log only records it
        assert [e["log_level"] for e in logs if e["event"] == "store.vector_index_skipped"] == ["info"]
        assert (await store.report.info()).vector_index["exists"] is False
    finally:
        await store.close()


async def test_create_index_with_enough_chunks_builds_an_ivf_sq_index_searches_use(wiki, fake_embed):
    config, ref = wiki
    store = await Store.open(ref, config, create=True)
    try:
        texts = [f"chunk number {i} about topic{i % 17} and theme{i % 5}" for i in range(300)]
        await store.writer().documents.upsert_document(
            Document(uri="file:///big.md"),
            [Chunk(content=t, order=i) for i, t in enumerate(texts)],
            [fake_embed(t) for t in texts],
        )
        assert await store.indexes.create_index() is True
        state = (await store.report.info()).vector_index
        assert state["exists"] and state["indexed_rows"] == 300 and state["type"] == "IvfSq"
        results = await store.search("", query_vector=fake_embed(texts[42]), search_type="vector", limit=3)
        assert len(results) == 3 and all(r.document_uri == "file:///big.md" for r in results)
    finally:
        await store.close()


# --- vacuum ------------------------------------------------------------------------------------------


async def test_vacuum_already_running_in_the_process_returns_at_once(wiki, write_doc):
    config, ref = wiki
    store = await Store.open(ref, config, create=True)
    try:
        await write_doc(store, "file:///a.md", "words")
        first = asyncio.create_task(store.vacuum())
        await asyncio.sleep(0)
        assert await store.vacuum() is None
        assert await first is not None
    finally:
        await store.close()


async def test_vacuum_rejects_negative_retention(wiki):
    config, ref = wiki
    store = await Store.open(ref, config, create=True)
    try:
        with pytest.raises(ValueError, match=">= 0"):
            await store.vacuum(retention_seconds=-1)
    finally:
        await store.close()


async def test_closing_after_writes_maintains_once(db_config, write_doc):
    def versions_after_writes(auto_vacuum: bool):
        config = db_config("wiki", storage={"auto_vacuum": auto_vacuum, "vacuum_retention_seconds": 0})
        return config, DatabaseScope.resolve(config).databases[0]

    counts = {}
    for auto in (False, True):
        config, ref = versions_after_writes(auto)
        store = await Store.open(ref, config, create=not auto)
        for i in range(3):
            await write_doc(store, f"file:///{auto}-{i}.md", "words")
        await store.close()
        reader = await Store.open(ref, config, read_only=True)
        counts[auto] = len((await reader.tags.history(table="chunks"))["chunks"])
        await reader.close()
    assert counts[True] < counts[False]


async def test_a_write_starts_background_maintenance_once_the_interval_has_passed(wiki, write_doc, monkeypatch):
    config, ref = wiki
    store = await Store.open(ref, config, create=True)
    try:
        await write_doc(store, "file:///a.md", "words")
        assert store.maintenance.auto_task is None  # opened just now: the interval has not passed
        monkeypatch.setattr(maintenance, "AUTO_MAINTENANCE_INTERVAL_S", 0.0)
        await write_doc(store, "file:///b.md", "more words")
        assert store.maintenance.auto_task is not None
        await store.maintenance.auto_task
        assert store.gate.dirty is False
    finally:
        await store.close()


async def test_info_reports_what_haiku_rag_info_prints(wiki, write_doc):
    config, ref = wiki
    store = await Store.open(ref, config, create=True)
    try:
        await write_doc(store, "file:///a.md", "alpha", "beta")
        await store.tags.create_tag("t1")
        info = await store.report.info()
    finally:
        await store.close()
    assert info.name == "wiki" and info.location == str(ref.location.resolve())
    assert info.schema_version == BASE and info.pending_migrations == []
    assert info.embedder == {
        "provider": "sentence-transformers",
        "model": "all-MiniLM-L6-v2",
        "vector_dim": 384,
    }
    assert (info.documents, info.chunks, info.tags) == (1, 2, 1)
    assert info.fts_index["exists"] and info.fts_index["indexed_rows"] == 2
    assert info.vector_index["exists"] is False
    assert set(info.table_versions) == {
        "documents", "chunks", "document_items", "page_images", "picture_vectors", "settings"
    }


async def test_recording_a_new_embedder_retrains_an_existing_vector_index(wiki, fake_embed):
    from haiku.core.embedders import EmbedderIdentity

    config, ref = wiki
    store = await Store.open(ref, config, create=True)
    try:
        texts = [f"entry {i} on subject{i % 13}" for i in range(260)]
        await store.writer().documents.upsert_document(
            Document(uri="file:///big.md"),
            [Chunk(content=t, order=i) for i, t in enumerate(texts)],
            [fake_embed(t) for t in texts],
        )
        await store.indexes.create_index()

        async def vector_index_uuid():
            return next(
                ix.index_uuid for ix in await store.table("chunks").list_indices() if ix.columns == ["vector"]
            )

        before = await vector_index_uuid()
        await store.writer().rebuild.record_identity(EmbedderIdentity("openai", "nomic-embed-text", 384))
        assert await vector_index_uuid() != before
    finally:
        await store.close()
