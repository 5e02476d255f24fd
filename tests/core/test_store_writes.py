"""Document writes and what readers see of them (docs/storage.md)."""

from __future__ import annotations

import re
import uuid

import pyarrow as pa
import pytest

from haiku.core.embedders import EmbedderIdentity
from haiku.core.models import Chunk, Document
from haiku.core.scope import DatabaseScope
from haiku.core.store import Store, maintenance_steps
from haiku.core.store.schema import chunks_schema


async def test_upsert_of_a_new_uri_assigns_a_uuid4_and_sets_source(store, write_doc):
    doc = await write_doc(store, "file:///a.md", "alpha", "beta")
    assert uuid.UUID(doc.id).version == 4
    assert doc.source == "papers"
    stored = await store.reads.get_document_by_uri("file:///a.md")
    assert stored is not None and stored.id == doc.id and stored.source == "papers"


async def test_upsert_of_the_same_uri_keeps_the_id_and_replaces_the_chunks(store, write_doc):
    first = await write_doc(store, "file:///a.md", "old one", "old two", "old three")
    second = await write_doc(store, "file:///a.md", "new one")
    assert second.id == first.id
    assert second.created_at == first.created_at
    assert [c.content for c in await store.reads.get_chunks(first.id)] == ["new one"]
    assert await store.reads.count_chunks() == 1


async def test_chunks_come_back_in_order_with_headings_pages_and_metadata(store, fake_embed):
    chunks = [
        Chunk(
            content="second", order=1, headings=["Intro", "Detail"], page_numbers=[2, 3], metadata={"k": 1}
        ),
        Chunk(content="first", order=0, headings=["Intro"], page_numbers=[1]),
    ]
    doc = await store.writer().documents.upsert_document(
        Document(uri="file:///h.md", content="x"), chunks, [fake_embed(c.content) for c in chunks]
    )
    got = await store.reads.get_chunks(doc.id)
    assert [(c.order, c.content, c.headings, c.page_numbers) for c in got] == [
        (0, "first", ["Intro"], [1]),
        (1, "second", ["Intro", "Detail"], [2, 3]),
    ]
    assert got[1].metadata == {"k": 1} and got[1].source == "papers"


async def test_headings_are_searchable_by_full_text(store, fake_embed):
    chunk = Chunk(content="body text only", headings=["Photosynthesis"])
    await store.writer().documents.upsert_document(Document(uri="file:///p.md"), [chunk], [fake_embed("body text only")])
    results = await store.search("photosynthesis", search_type="fts")
    assert [r.content for r in results] == ["body text only"]


async def test_upsert_rejects_vectors_of_the_wrong_dimension(store):
    with pytest.raises(ValueError, match="384"):
        await store.writer().documents.upsert_document(Document(uri="file:///a.md"), [Chunk(content="x")], [[0.1, 0.2]])


async def test_delete_document_removes_the_document_and_its_chunks(store, write_doc):
    doc = await write_doc(store, "file:///a.md", "alpha", "beta")
    await write_doc(store, "file:///b.md", "gamma")
    assert await store.writer().documents.delete_document(doc.id) == 2  # the chunks it removed
    assert await store.reads.get_document_by_id(doc.id) is None
    assert await store.reads.count_chunks() == 1
    assert await store.writer().documents.delete_document(doc.id) is None


async def test_update_document_metadata_keeps_chunks(store, write_doc):
    doc = await write_doc(store, "file:///a.md", "alpha", metadata={"rev": "1"})
    assert await store.writer().documents.update_document_metadata(doc.id, {"rev": "2"}) is True
    assert (await store.reads.get_document_by_id(doc.id)).metadata == {"rev": "2"}
    assert [c.content for c in await store.reads.get_chunks(doc.id)] == ["alpha"]
    assert await store.writer().documents.update_document_metadata("no-such-id", {}) is False


async def _add_orphan(store, fake_embed, document_id: str | None = None) -> str:
    orphan_doc = document_id or str(uuid.uuid4())
    row = {
        "id": str(uuid.uuid4()),
        "document_id": orphan_doc,
        "chunk_order": 0,
        "content": "orphaned words",
        "search_text": "orphaned words",
        "headings": [],
        "page_numbers": [],
        "metadata": "{}",
        "vector": fake_embed("orphaned words"),
    }
    await store.table("chunks").add(pa.Table.from_pylist([row], schema=chunks_schema(384)))
    return row["id"]


async def test_reads_skip_chunks_whose_document_row_is_absent(store, write_doc, fake_embed):
    await write_doc(store, "file:///a.md", "kept words")
    orphan_id = await _add_orphan(store, fake_embed)
    assert await store.reads.get_chunk_by_id(orphan_id) is None
    for kind in ("fts", "vector", "hybrid"):
        results = await store.search(
            "orphaned words", query_vector=fake_embed("orphaned words"), search_type=kind, limit=5
        )
        assert orphan_id not in [r.chunk_id for r in results], kind
        assert [r.content for r in results if kind != "fts"] in ([], ["kept words"])


async def test_chunk_counts_count_each_documents_current_chunks_in_one_call(store, write_doc, fake_embed):
    three = await write_doc(store, "file:///a.md", "one", "two", "three")
    one = await write_doc(store, "file:///b.md", "four")
    await _add_orphan(store, fake_embed)  # a document that does not exist
    await _add_orphan(store, fake_embed, document_id=one.id)  # not of the document's revision
    missing = str(uuid.uuid4())
    assert await store.reads.chunk_counts([three.id, one.id, missing]) == {three.id: 3, one.id: 1}
    assert await store.reads.chunk_counts([]) == {}


async def test_remove_orphan_chunks_deletes_only_orphans(store, write_doc, fake_embed):
    await write_doc(store, "file:///a.md", "kept words")
    await _add_orphan(store, fake_embed)
    assert await store.reads.count_chunks() == 2
    assert await store.writer().orphans.remove_orphan_chunks() == 1
    assert await store.reads.count_chunks() == 1
    assert await store.writer().orphans.remove_orphan_chunks() == 0


async def test_the_first_write_of_an_open_store_removes_orphans(db_config, write_doc, fake_embed):
    config = db_config("papers")
    ref = DatabaseScope.resolve(config).databases[0]
    first = await Store.open(ref, config, create=True)
    await _add_orphan(first, fake_embed)
    await first.close()
    store = await Store.open(ref, config)
    try:
        await write_doc(store, "file:///a.md", "fresh")
        assert await store.reads.count_chunks() == 1
    finally:
        await store.close()


async def test_iter_chunk_batches_and_replace_vectors_rewrite_every_vector(store, write_doc, fake_embed):
    await write_doc(store, "file:///a.md", "one", "two", "three")
    await write_doc(store, "file:///b.md", "four")
    seen: list[str] = []
    async for batch in store.writer().rebuild.iter_chunk_batches(batch_size=3):
        assert len(batch) <= 3
        await store.writer().rebuild.replace_vectors({c.id: fake_embed("replaced " + c.content) for c in batch})
        seen.extend(c.content for c in batch)
    assert sorted(seen) == ["four", "one", "three", "two"]
    results = await store.search("", query_vector=fake_embed("replaced four"), search_type="vector", limit=1)
    assert results[0].content == "four" and results[0].score == pytest.approx(1.0, abs=1e-5)


async def test_replace_vectors_with_a_new_dimension_must_cover_every_chunk(store, write_doc):
    await write_doc(store, "file:///a.md", "one", "two")
    chunks = [c async for batch in store.writer().rebuild.iter_chunk_batches() for c in batch]
    with pytest.raises(ValueError, match="every chunk"):
        await store.writer().rebuild.replace_vectors({chunks[0].id: [1.0] * 8})
    await store.writer().rebuild.replace_vectors({c.id: [1.0] + [0.0] * 7 for c in chunks})
    assert store.vector_dim == 8
    assert [c.content for c in await store.reads.get_chunks(chunks[0].document_id)] == ["one", "two"]


async def test_a_dimension_change_drops_orphan_chunks_instead_of_refusing(store, write_doc, fake_embed):
    await write_doc(store, "file:///a.md", "one")
    await _add_orphan(store, fake_embed)
    chunks = [c async for batch in store.writer().rebuild.iter_chunk_batches() for c in batch]
    assert [c.content for c in chunks] == ["one"]
    await store.writer().rebuild.replace_vectors({chunks[0].id: [0.5] * 16})
    assert store.vector_dim == 16 and await store.reads.count_chunks() == 1


async def test_record_identity_is_what_the_next_open_reads(db_config):
    config = db_config("papers")
    ref = DatabaseScope.resolve(config).databases[0]
    store = await Store.open(ref, config, create=True)
    new = EmbedderIdentity(provider="openai", model="nomic", vector_dim=384)
    await store.writer().rebuild.record_identity(new)
    await store.close()
    reopened = await Store.open(ref, config, skip_validation=True)
    try:
        assert reopened.identity == new
    finally:
        await reopened.close()


async def test_rebuild_marker_is_reported_by_info_until_cleared(store):
    await store.writer().rebuild.set_rebuild_marker({"target": "openai/nomic"})
    assert (await store.report.info()).rebuild_marker == {"target": "openai/nomic"}
    await store.writer().rebuild.set_rebuild_marker(None)
    assert (await store.report.info()).rebuild_marker is None


async def test_a_reader_never_sees_a_document_with_a_mixed_or_partial_set_of_chunks(
    db_config, fake_embed, monkeypatch, read_while_writing
):
    """A writer replaces one document's chunks over and over; a second store polls it meanwhile.

    Compaction is made frequent so it also runs under the reader.
    """
    monkeypatch.setattr(maintenance_steps, "COMPACT_AT_FRAGMENTS", 3)
    config = db_config("papers")
    ref = DatabaseScope.resolve(config).databases[0]
    writer = await Store.open(ref, config, create=True)
    reader = await Store.open(ref, config, read_only=True)
    rounds = 12

    def version_chunks(n: int) -> list[str]:
        return [f"version{n} part{i} shared words" for i in range(2 + n % 4)]

    async def write(n: int):
        texts = version_chunks(n)
        return await writer.writer().documents.upsert_document(
            Document(uri="file:///doc.md", content=str(n)),
            [Chunk(content=t, order=i) for i, t in enumerate(texts)],
            [fake_embed(t) for t in texts],
        )

    doc = await write(0)
    observed: list[list[str]] = []

    async def read():
        chunks = [c.content for c in await reader.reads.get_chunks(doc.id)]
        hits = await reader.search(
            "shared words", query_vector=fake_embed("shared words"), search_type="hybrid", limit=20
        )
        observed.append(chunks)
        observed.append(sorted(r.content for r in hits))

    try:
        await read_while_writing(write, read, rounds)
    finally:
        await reader.close()
        await writer.close()
    seen_versions = {re.match(r"version(\d+)", c[0]).group(1) for c in observed if c}
    assert len(seen_versions) > 2  # the reader really overlapped several writes
    for contents in observed:
        versions = {re.match(r"version(\d+)", c).group(1) for c in contents}
        assert len(versions) == 1, contents  # never empty, never two versions
        assert sorted(contents) == sorted(version_chunks(int(versions.pop()))), contents


async def test_many_writes_keep_the_tables_compacted(store, write_doc, monkeypatch):
    monkeypatch.setattr(maintenance_steps, "COMPACT_AT_FRAGMENTS", 4)
    for i in range(10):
        await write_doc(store, f"file:///{i}.md", f"text number {i}")
    stats = await store.table("chunks").stats()
    assert stats["fragment_stats"]["num_fragments"] < 4
    assert await store.reads.count_documents() == 10
    assert len(await store.search("number", search_type="fts", limit=20)) == 10


async def test_a_reader_whose_chunk_view_lags_its_document_view_reads_again_instead_of_seeing_no_chunks(
    db_config, fake_embed
):
    """The two tables' handles move on their own: here the documents handle has seen an update
    and the chunks handle has not. The read finds the document's revision in no chunk it sees,
    brings its handles up to date and reads the new chunks (docs/storage.md)."""
    config = db_config("papers", lancedb={"read_consistency_interval_seconds": None})
    ref = DatabaseScope.resolve(config).databases[0]
    writer = await Store.open(ref, config, create=True)
    reader = await Store.open(ref, config, read_only=True)

    async def write(*texts: str) -> Document:
        return await writer.writer().documents.upsert_document(
            Document(uri="file:///doc.md", content=" ".join(texts)),
            [Chunk(content=t, order=i) for i, t in enumerate(texts)],
            [fake_embed(t) for t in texts],
        )

    try:
        doc = await write("old words one", "old words two")
        await reader.table("documents").checkout_latest()
        await reader.table("chunks").checkout_latest()
        assert [c.content for c in await reader.reads.get_chunks(doc.id)] == ["old words one", "old words two"]
        await write("new words one")
        await reader.table("documents").checkout_latest()  # only the documents handle moves on
        assert [c.content for c in await reader.reads.get_chunks(doc.id)] == ["new words one"]
        hits = await reader.search("words", query_vector=fake_embed("words"), search_type="hybrid", limit=5)
        assert [h.content for h in hits] == ["new words one"]
    finally:
        await reader.close()
        await writer.close()
