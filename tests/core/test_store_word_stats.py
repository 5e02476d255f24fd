"""Word statistics kept with the database by its writer (haiku.core.store.word_stats; docs/fusion.md)."""

from __future__ import annotations

import re
import sqlite3

import pytest

from haiku.core.store import fulltext
from haiku.core.store.word_stats import FILE_NAME, index_tokens, stamp_of

CORPUS = {
    "file:///cells.md": "cells divide by mitosis",
    "file:///membrane.md": "a cell membrane surrounds the cell",
    "file:///stars.md": "stars fuse hydrogen into helium",
    "file:///planets.md": "planets orbit stars",
    "file:///bread.md": "bread needs yeast and flour",
}
TEXTS = list(CORPUS.values())


@pytest.fixture
async def store(store, write_doc):
    """The empty database of tests/core/conftest.py, holding CORPUS, its statistics kept."""
    for uri, text in CORPUS.items():
        await write_doc(store, uri, text)
    await store.word_stats.settle()
    return store


@pytest.fixture
def tokenised(monkeypatch) -> list[str]:
    """Every text the writer tokenises from now on."""
    from haiku.core.store import word_stats

    seen: list[str] = []
    original = word_stats._count_tokens

    def recording(texts):
        seen.extend(texts)
        return original(texts)

    monkeypatch.setattr(word_stats, "_count_tokens", recording)
    return seen


def _words(texts) -> list[str]:
    return sorted({word for text in texts for word in re.findall(r"\w+", text.lower())})


async def _counted(store, words) -> dict[str, int]:
    """Each word's chunks as a one-word index query counts them (what a search would count)."""
    chunks = await store.reads.count_chunks()
    return {word: await fulltext._count_matches(store.handles.chunks, word, chunks) for word in words}


async def _kept(store, words) -> tuple[int, dict[str, int]] | None:
    version = await store.handles.chunks.version()
    return store.fulltext.word_stats.lookup(stamp_of(store.handles, version), words, index_tokens)


async def _reopened(store):
    from haiku.core.store import Store

    return await Store.open(store.ref, store.config, read_only=True)


async def test_kept_statistics_equal_what_the_index_counts(store):
    words = _words(TEXTS)
    assert await _kept(store, words) == (len(TEXTS), await _counted(store, words))


async def test_a_word_is_found_by_spelling_and_tokenised_only_when_no_chunk_spells_it(store, monkeypatch):
    from haiku.core.store import fulltext

    asked: list[str] = []

    def tokenize(word):
        asked.append(word)
        return index_tokens(word)

    async def no_counting(*args, **kwargs):
        raise AssertionError("a word was counted")

    monkeypatch.setattr(fulltext, "index_tokens", tokenize)
    monkeypatch.setattr(fulltext, "_count_matches", no_counting)
    # "membranes" stems like "membrane", which a chunk holds; no chunk spells it.
    stats = await store.fts_statistics(["membranes", "zebra", "cells"])
    assert dict(stats.frequencies) == {"membranes": 1, "zebra": 0, "cells": 2}
    assert sorted(asked) == ["membranes", "zebra"]


async def test_statistics_follow_updates_and_deletes(store, write_doc):
    await write_doc(store, "file:///cells.md", "stars and cells and more stars")  # an update
    await write_doc(store, "file:///new.md", "yeast cells")
    doc = await store.reads.get_document_by_uri("file:///planets.md")
    await store.writer().documents.delete_document(doc.id)
    await store.word_stats.settle()
    words = [*_words(TEXTS), "more"]
    assert await _kept(store, words) == (await store.reads.count_chunks(), await _counted(store, words))


async def test_statistics_are_brought_to_the_version_a_vacuum_leaves(store):
    await store.vacuum(retention_seconds=0)
    words = _words(TEXTS)
    assert await _kept(store, words) == (len(TEXTS), await _counted(store, words))


async def test_a_search_counts_no_word_the_database_keeps(store, monkeypatch):
    reopened = await _reopened(store)  # a reader in another process: nothing cached in memory
    try:

        async def no_counting(*args, **kwargs):
            raise AssertionError("a kept word was counted")

        monkeypatch.setattr(fulltext, "_count_matches", no_counting)
        stats = await reopened.fts_statistics(["cells", "stars", "cell"])
        assert (stats.chunks, dict(stats.frequencies)) == (len(TEXTS), {"cells": 2, "stars": 2, "cell": 2})
    finally:
        await reopened.close()


async def test_a_word_the_index_splits_is_still_counted(store, write_doc):
    await write_doc(store, "file:///ids.md", "covid 19 x_y")
    await store.word_stats.settle()
    kept = await _kept(store, ["covid_19", "covid"])
    assert kept is not None and kept[1] == {"covid": 1}  # "covid_19" is two index tokens
    assert (await store.fts_statistics(["covid_19"])).frequencies["covid_19"] == 1


async def test_a_reader_keeping_the_file_open_sees_the_writer_move_it_on(store, write_doc):
    reopened = await _reopened(store)  # a reader: it keeps one connection to the file between lookups
    try:
        before = await reopened.handles.chunks.version()
        assert await _kept(reopened, ["yeast"]) == (len(TEXTS), {"yeast": 1})
        await write_doc(store, "file:///more.md", "yeast again")
        await store.word_stats.settle()  # the file moved on in place, under the reader's connection
        stale = reopened.fulltext.word_stats.lookup(stamp_of(reopened.handles, before), ["yeast"], index_tokens)
        assert stale is None
        await reopened.handles.refresh_to_latest()
        assert await _kept(reopened, ["yeast", "again"]) == (len(TEXTS) + 1, {"yeast": 2, "again": 1})
    finally:
        await reopened.close()


DAMAGED = {
    "a negative count": "UPDATE words SET chunks = -5 WHERE token = 'cell'",
    "a fractional count": "UPDATE words SET chunks = 2.5 WHERE token = 'cell'",
    "a count as text": "UPDATE words SET chunks = 'two' WHERE token = 'cell'",
    "a count above the chunk count": "UPDATE words SET chunks = 99 WHERE token = 'cell'",
    "an overflowing count": "UPDATE words SET chunks = 1e999 WHERE token = 'cell'",
    "a chunk count that is not whole": "UPDATE meta SET value = 'many' WHERE key = 'chunks'",
    "a spelling whose token is not text": "UPDATE spellings SET token = x'01' WHERE word = 'cells'",
}


@pytest.mark.parametrize("damage", DAMAGED.values(), ids=DAMAGED.keys())
async def test_damaged_statistics_are_ignored_then_rebuilt(store, damage):
    from structlog.testing import capture_logs

    path = store.handles.location.path / FILE_NAME
    with sqlite3.connect(path) as connection:
        connection.execute(damage)
    reopened = await _reopened(store)
    try:
        with capture_logs() as logs:
            stats = await reopened.fts_statistics(["cells"])
        assert (stats.chunks, stats.frequencies["cells"]) == (len(TEXTS), 2)  # counted instead
        assert await _kept(reopened, ["cells"]) is None
        assert any(entry["event"] == "store.word_stats_ignored" for entry in logs)
    finally:
        await reopened.close()
    await store.word_stats.refresh()
    assert await _kept(store, ["cells"]) == (len(TEXTS), {"cells": 2})


async def test_a_read_only_store_keeps_no_statistics(store):
    path = store.handles.location.path / FILE_NAME
    path.unlink()
    reopened = await _reopened(store)
    try:
        await reopened.word_stats.refresh()
        assert not path.exists()
    finally:
        await reopened.close()


async def test_a_write_tokenises_only_the_rows_it_changed(store, write_doc, tokenised):
    await write_doc(store, "file:///cells.md", "cells divide fast")  # replaces one chunk
    await store.word_stats.settle()
    assert sorted(tokenised) == ["cells divide by mitosis", "cells divide fast"]


async def test_a_vacuum_that_keeps_old_versions_tokenises_nothing(store, tokenised):
    await store.vacuum()  # compacts: every row moves, no text changes
    assert tokenised == []
    words = _words(TEXTS)
    assert await _kept(store, words) == (len(TEXTS), await _counted(store, words))


async def test_a_search_after_background_maintenance_compacted_the_chunks_counts_no_word(store, write_doc,
                                                                                        monkeypatch):
    from structlog.testing import capture_logs

    from haiku.core.fusion.global_idf import global_idf_boosts
    from haiku.core.store import maintenance, maintenance_steps

    monkeypatch.setattr(maintenance_steps, "COMPACT_AT_FRAGMENTS", 10_000)  # writes leave their fragments to maintenance
    monkeypatch.setattr(maintenance, "AUTO_MAINTENANCE_INTERVAL_S", 0.0)
    with capture_logs() as logs:
        await write_doc(store, "file:///yeast.md", "yeast cells divide")  # a write that starts a background run
        assert store.maintenance.auto_task is not None
        await store.maintenance.auto_task
        await store.word_stats.settle()
    steps = [(e["table"], e["kind"]) for e in logs if e["event"] == "store.maintenance_step" and e["work"]]
    assert ("chunks", "compaction") in steps  # every chunk row moved
    reopened = await _reopened(store)  # a reader in another process: nothing cached in memory
    try:
        words = [*_words(TEXTS), "yeast"]
        stats = await reopened.fts_statistics(words)
        assert reopened.fulltext.words_counted == 0  # every word from the kept statistics
        assert (stats.chunks, dict(stats.frequencies)) == (len(TEXTS) + 1, await _counted(store, words))
        # Federated with another database, the ranking its kept statistics give is the ranking counting gives.
        other = fulltext.TermStatistics(40, {"cells": 30, "yeast": 1})
        counted = fulltext.TermStatistics(stats.chunks, await _counted(store, ["cells", "yeast"]))
        rankings = []
        for mine in (await reopened.fts_statistics(["cells", "yeast"]), counted):
            boosts = global_idf_boosts([mine, other])[0]
            found = await reopened.fts_candidates("cells yeast", limit=6, boosts=boosts)
            rankings.append([(r.chunk_id, round(r.score, 6)) for r in found])
        assert rankings[0] == rankings[1] and len(rankings[0]) == 4
    finally:
        await reopened.close()


async def test_settling_does_not_wait_out_the_spacing_between_two_refreshes(store, write_doc, monkeypatch):
    """After a long count the next refresh is spaced by minutes; a vacuum or close must not wait for that."""
    import asyncio

    from haiku.core.store import word_stats

    monkeypatch.setattr(word_stats, "_SPACING", 1e6)  # the spacing after any refresh: days
    await write_doc(store, "file:///comets.md", "comets have tails of dust")
    store.word_stats.after_write()  # a refresh in flight (this one's or the write's) ...
    await asyncio.sleep(0)  # ... started ...
    store.word_stats.after_write()  # ... and a write while it runs: one more is due after the spacing
    await asyncio.wait_for(store.word_stats.settle(), timeout=30)
    assert await _kept(store, ["comets"]) == (len(TEXTS) + 1, {"comets": 1})
