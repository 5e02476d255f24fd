"""Index and fragment upkeep after writes stays bounded by the write (docs/storage.md, "Indexes")."""

from __future__ import annotations

from haiku.core.store import indexes, maintenance_steps


async def fts_parts(store) -> int:
    chunks = store.table("chunks")
    (name,) = [ix.name for ix in await chunks.list_indices() if ix.columns == ["search_text"]]
    return (await chunks.index_stats(name)).num_indices


async def test_a_small_write_into_a_large_table_is_indexed_as_a_delta_and_found_by_full_text(store, fake_embed):
    items = [
        (doc, chunks, vectors)
        for doc, chunks, vectors in (
            _item(f"file:///{n}.md", f"common words about rivers {n}", fake_embed) for n in range(40)
        )
    ]
    await store.writer().documents.load_documents(items)
    assert await fts_parts(store) == 1
    # One document: far under a tenth of the table, which the index used to leave to flat search.
    await store.writer().documents.upsert_documents([_item("file:///new.md", "a zeppelin over the rivers", fake_embed)])
    state = (await store.indexes.index_state())["fts"]
    assert state["unindexed_rows"] == 0 and state["indexed_rows"] == 41
    assert await fts_parts(store) == 2  # the main index untouched, the new row in a delta beside it
    found = await store.search("zeppelin", search_type="fts", limit=3)
    assert [r.document_uri for r in found] == ["file:///new.md"]


async def test_deltas_are_merged_once_there_are_too_many_and_vacuum_merges_them_all(store, fake_embed, monkeypatch):
    monkeypatch.setattr(indexes, "MAX_INDEX_DELTAS", 3, raising=False)
    await store.writer().documents.load_documents([_item(f"file:///{n}.md", f"base text {n}", fake_embed) for n in range(20)])
    parts = []
    for n in range(7):
        await store.writer().documents.upsert_documents([_item(f"file:///w{n}.md", f"written word{n}", fake_embed)])
        parts.append(await fts_parts(store))
    assert max(parts) <= 1 + 3
    assert (await store.indexes.index_state())["fts"]["unindexed_rows"] == 0
    for n in range(7):
        found = await store.search(f"word{n}", search_type="fts", limit=3)
        assert [r.document_uri for r in found] == [f"file:///w{n}.md"]
    await store.vacuum(retention_seconds=0)
    assert await fts_parts(store) == 1


async def test_compaction_after_writes_leaves_a_large_fragment_as_it_is(store, fake_embed, monkeypatch):
    monkeypatch.setattr(maintenance_steps, "COMPACT_AT_FRAGMENTS", 4)
    monkeypatch.setattr(maintenance_steps, "STEP_ROWS", 20)
    await store.writer().documents.load_documents([_item(f"file:///{n}.md", f"bulk text {n}", fake_embed) for n in range(30)])
    await store.vacuum(retention_seconds=0)
    chunks = store.table("chunks")

    async def fragments() -> dict[int, int]:
        return {f.fragment_id: f.count_rows() for f in (await chunks.to_lance()).get_fragments()}

    (large,) = [fid for fid, rows in (await fragments()).items() if rows == 30]
    for n in range(6):
        await store.writer().documents.upsert_documents([_item(f"file:///w{n}.md", f"small write {n}", fake_embed)])
    after = await fragments()
    assert after[large] == 30  # the bulk was not rewritten
    assert len([rows for rows in after.values() if rows < 20]) < 4  # the small fragments were merged
    assert await store.reads.count_chunks() == 36
    assert len(await store.search("small write", search_type="fts", limit=10)) == 6


async def test_a_compacting_write_rewrites_one_steps_worth_of_small_fragments_not_all(store, fake_embed, monkeypatch):
    monkeypatch.setattr(maintenance_steps, "COMPACT_AT_FRAGMENTS", 10_000)
    for n in range(12):
        await store.writer().documents.upsert_documents([_item(f"file:///{n}.md", f"small write {n}", fake_embed)])
    chunks = store.table("chunks")

    async def fragments() -> dict[int, int]:
        return {f.fragment_id: f.count_rows() for f in (await chunks.to_lance()).get_fragments()}

    before = await fragments()
    assert len(before) == 12
    monkeypatch.setattr(maintenance_steps, "STEP_ROWS", 4)  # a step merges fewer than 8 rows
    monkeypatch.setattr(maintenance_steps, "COMPACT_AT_FRAGMENTS", 4)
    await store.writer().documents.upsert_documents([_item("file:///last.md", "the write that compacts", fake_embed)])
    after = await fragments()
    made = [rows for fid, rows in after.items() if fid not in before]
    assert len(after) < len(before)  # it compacted
    assert sum(made) <= 2 * 4 + 1  # one group of small fragments (and its own row), not all twelve
    assert len([fid for fid in after if fid in before]) >= 12 - 2 * 4  # the rest left for the next writes
    assert await store.reads.count_chunks() == 13
    assert len(await store.search("small write", search_type="fts", limit=20)) == 13


async def test_a_bulk_load_compacts_step_after_step_until_few_small_fragments_are_left(store, fake_embed, monkeypatch):
    monkeypatch.setattr(maintenance_steps, "STEP_ROWS", 4)
    monkeypatch.setattr(maintenance_steps, "COMPACT_AT_FRAGMENTS", 4)
    await store.writer().documents.load_documents([_item(f"file:///{n}.md", f"bulk text {n}", fake_embed) for n in range(20)],
                               batch_size=1)  # twenty fragments of one row
    rows = [f.count_rows() for f in (await store.table("chunks").to_lance()).get_fragments()]
    assert len([n for n in rows if n < 4]) < 4 and sum(rows) == 20
    assert len(await store.search("bulk text", search_type="fts", limit=30)) == 20


def _item(uri: str, text: str, fake_embed):
    from haiku.core.models import Chunk, Document

    return Document(uri=uri, title=uri, content=text), [Chunk(content=text, order=0)], [fake_embed(text)]
