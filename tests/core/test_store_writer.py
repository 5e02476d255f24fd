"""A store publishes its parts and hands out its writer only where documents may be written
(docs/storage.md, "Parts and the writer")."""

from __future__ import annotations

import pytest

from haiku.core.errors import ReadOnlyError
from haiku.core.scope import DatabaseScope
from haiku.core.store import Store

# What writes documents or chunks; none of it stands on the store itself.
DOCUMENT_WRITES = (
    "upsert_document", "upsert_documents", "load_documents", "update_document_metadata", "delete_document",
    "remove_orphan_chunks", "replace_vectors", "replace_picture_vectors", "record_identity", "record_processing",
)  # fmt: skip


def test_the_store_itself_has_no_document_write():
    assert [name for name in DOCUMENT_WRITES if hasattr(Store, name)] == []


async def test_a_writable_store_hands_out_its_writer_and_its_reads_see_the_write(store, write_doc):
    written = await write_doc(store, "file:///a.md", "alpha words")
    assert [d.id for d in await store.reads.list_documents()] == [written.id]
    assert await store.writer().documents.delete_document(written.id) == 1
    assert await store.reads.count_documents() == 0


async def _reopened(db_config, store, write_doc, **options) -> Store:
    """papers, holding one document, opened a second time with ``options``."""
    await write_doc(store, "file:///a.md", "alpha words")
    config = db_config("papers")
    return await Store.open(DatabaseScope.resolve(config).databases[0], config, **options)


async def test_a_read_only_store_refuses_the_writer_naming_the_database(db_config, store, write_doc):
    async with await _reopened(db_config, store, write_doc, read_only=True) as reader:
        with pytest.raises(ReadOnlyError, match="papers' is open read-only; writing documents"):
            reader.writer()
        assert await reader.reads.count_documents() == 1


async def test_a_store_opened_without_document_writes_refuses_the_writer_yet_keeps_its_lifecycle(
    db_config, store, write_doc
):
    async with await _reopened(db_config, store, write_doc, writes_documents=False) as lifecycle:
        with pytest.raises(ReadOnlyError, match="papers' is open for reads and lifecycle work only"):
            lifecycle.writer()
        await lifecycle.tags.create_tag("r1")
        assert [t.name for t in await lifecycle.tags.list_tags()] == ["r1"]
