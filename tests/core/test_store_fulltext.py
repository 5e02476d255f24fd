"""Full-text term statistics and boosted queries (haiku.core.store.fulltext; docs/fusion.md)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from haiku.core.store.fulltext import query_words

TEXTS = [
    "cells divide by mitosis",
    "a cell membrane surrounds the cell",
    "stars fuse hydrogen into helium",
    "planets orbit stars",
    "bread needs yeast and flour",
]


@pytest.fixture
async def store(store, write_doc):
    """The empty database of tests/core/conftest.py, holding TEXTS, one document each.

    Without the word statistics its writer keeps (tests/core/test_store_word_stats.py):
    these tests are of counting words with the index.
    """
    from haiku.core.store.word_stats import FILE_NAME

    for index, text in enumerate(TEXTS):
        await write_doc(store, f"file:///doc{index}.md", text)
    await store.word_stats.settle()
    (store.handles.location.path / FILE_NAME).unlink()
    return store


def test_query_words_are_lower_cased_distinct_and_split_like_the_index():
    assert query_words("What's the Cell's role? cell, CELL; co-operation") == [
        "what", "s", "the", "cell", "role", "co", "operation"
    ]


def test_query_words_skip_tokens_longer_than_the_index_keeps():
    assert query_words("a " + "x" * 41 + " b") == ["a", "b"]


async def test_statistics_count_chunks_matching_each_word_as_the_index_stems_it(store):
    stats = await store.fts_statistics(["cells", "cell", "stars", "zebra"])
    assert stats.chunks == len(TEXTS)
    # "cells" and "cell" stem alike: both count the two chunks about cells.
    assert dict(stats.frequencies) == {"cells": 2, "cell": 2, "stars": 2, "zebra": 0}


async def test_statistics_follow_a_write(store, write_doc):
    assert (await store.fts_statistics(["stars"])).frequencies["stars"] == 2
    await write_doc(store, "file:///more.md", "stars are far")
    stats = await store.fts_statistics(["stars"])
    assert (stats.chunks, stats.frequencies["stars"]) == (len(TEXTS) + 1, 3)


async def test_a_boost_multiplies_a_words_bm25_score(store):
    plain = await store.fts_candidates("stars", limit=5)
    boosted = await store.fts_candidates("stars", limit=5, boosts={"stars": 2.5})
    assert [r.chunk_id for r in boosted] == [r.chunk_id for r in plain]
    assert [r.score for r in boosted] == pytest.approx([2.5 * r.score for r in plain], rel=1e-5)


async def test_boosts_reweigh_the_words_of_a_query(store):
    plain = await store.fts_candidates("cell stars", limit=5)
    assert plain[0].content.startswith("a cell membrane")  # two matches of a word as rare as "stars"
    reweighed = await store.fts_candidates("cell stars", limit=5, boosts={"cell": 0.1, "stars": 3.0})
    assert "stars" in reweighed[0].content


async def test_boosts_naming_no_word_match_nothing(store):
    assert await store.fts_candidates("stars", limit=5, boosts={}) == []


async def test_hybrid_candidates_take_boosts_for_their_full_text_list(store, fake_embed):
    vector, plain = await store.hybrid_candidates("stars", fake_embed("stars"), limit=5)
    _, boosted = await store.hybrid_candidates("stars", fake_embed("stars"), limit=5, fts_boosts={"stars": 2.0})
    assert vector
    assert [r.score for r in boosted] == pytest.approx([2.0 * r.score for r in plain], rel=1e-5)


async def _reopened(store):
    from haiku.core.store import Store

    return await Store.open(store.ref, store.config, read_only=True)


async def test_counts_persist_so_another_process_counts_nothing_again(store, monkeypatch):
    from haiku.core.store import fulltext

    first = await store.fts_statistics(["cells", "stars"])
    reopened = await _reopened(store)  # a fresh Store has an empty in-memory cache, like a new process
    try:

        async def no_counting(*args, **kwargs):
            raise AssertionError("a saved count was counted again")

        monkeypatch.setattr(fulltext, "_count_matches", no_counting)
        assert await reopened.fts_statistics(["stars", "cells"]) == first.__class__(
            first.chunks, {"stars": 2, "cells": 2}
        )
    finally:
        await reopened.close()


async def test_saved_counts_of_an_older_table_version_are_not_used(store, write_doc):
    assert (await store.fts_statistics(["stars"])).frequencies["stars"] == 2
    await write_doc(store, "file:///more.md", "stars are far")
    reopened = await _reopened(store)
    try:
        stats = await reopened.fts_statistics(["stars"])
        assert (stats.chunks, stats.frequencies["stars"]) == (len(TEXTS) + 1, 3)
    finally:
        await reopened.close()


async def test_counts_still_answer_when_the_cache_cannot_be_written(store):
    cache = store.config.data_dir / "cache"
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text("a file where the cache folder would go")
    stats = await store.fts_statistics(["cells"])
    assert stats.frequencies["cells"] == 2


def test_a_counts_file_of_another_database_or_garbage_is_ignored(tmp_path):
    from haiku.core.store._counts_file import CountsFile

    mine = CountsFile.for_database(tmp_path, "/data/a.lancedb")
    mine.save((3, 10, {"cells": 2}))
    assert mine.load(3) == (3, 10, {"cells": 2})
    assert mine.load(4) is None
    other = CountsFile(mine.path, "/data/b.lancedb")  # same file, another location
    assert other.load(3) is None
    mine.path.write_text("{not json")
    assert mine.load(3) is None


DAMAGED_COUNTS = {
    "an overflowing count": '{"cells": 1e999}',
    "a count that is not a number": '{"cells": NaN}',
    "a negative count": '{"cells": -5}',
    "a fractional count": '{"cells": 2.5}',
    "a count as text": '{"cells": "2"}',
    "a count as a boolean": '{"cells": true}',
    "a count above the chunk count": '{"cells": 11}',
    "counts that are a list": '[["cells", 2]]',
}


@pytest.mark.parametrize("counts", DAMAGED_COUNTS.values(), ids=DAMAGED_COUNTS.keys())
def test_a_damaged_counts_file_is_removed_and_logged_once(tmp_path, counts):
    from structlog.testing import capture_logs

    from haiku.core.store._counts_file import CountsFile

    mine = CountsFile.for_database(tmp_path, "/data/a.lancedb")
    mine.save((3, 10, {"cells": 2}))
    text = mine.path.read_text().replace('{"cells":2}', counts)
    logged = []
    for _ in range(2):
        mine.path.write_text(text)
        with capture_logs() as logs:
            assert mine.load(3) is None
        assert not mine.path.exists()
        logged.append([(e["event"], e["log_level"]) for e in logs])
    # the second time in this process is not logged again
    assert logged == [[("store.fts_counts_discarded", "warning")], []]
    mine.save((3, 10, {"stars": 1}))  # written afresh, the damaged counts not merged in
    assert mine.load(3) == (3, 10, {"stars": 1})


@pytest.mark.parametrize(
    "field, value",
    [("version", "1e999"), ("version", "-1"), ("chunks", "1e999"), ("chunks", "-10"), ("chunks", "10.0")],
)
def test_a_damaged_version_or_chunk_count_is_removed(tmp_path, field, value):
    from structlog.testing import capture_logs

    from haiku.core.store._counts_file import CountsFile

    mine = CountsFile.for_database(tmp_path, "/data/a.lancedb")
    mine.save((3, 10, {"cells": 2}))
    saved = {"version": '"version":3', "chunks": '"chunks":10'}[field]
    mine.path.write_text(mine.path.read_text().replace(saved, f'"{field}":{value}'))
    with capture_logs() as logs:
        assert mine.load(3) is None
    assert not mine.path.exists()
    assert [(e["event"], e["log_level"]) for e in logs] == [("store.fts_counts_discarded", "warning")]


async def test_a_poisoned_counts_file_neither_crashes_nor_changes_the_statistics(store):
    honest = await store.fts_statistics(["cells", "stars"])
    [counts_file] = (store.config.data_dir / "cache" / "fts-counts").glob("*.json")
    for poison in ("1e999", "-5"):
        counts_file.write_text(counts_file.read_text().replace('"cells":2', f'"cells":{poison}'))
        reopened = await _reopened(store)  # a fresh Store reads the file, like a new process
        try:
            assert await reopened.fts_statistics(["cells", "stars"]) == honest
        finally:
            await reopened.close()
        assert '"cells":2' in counts_file.read_text()  # rewritten with the true count


@pytest.fixture
async def kept_store(store, write_doc):
    """TEXTS plus one more document, with the word statistics its writer keeps (the file is back)."""
    await write_doc(store, "file:///more.md", "membrane proteins")
    await store.word_stats.settle()
    return store


@pytest.fixture
def unspelled(monkeypatch) -> SimpleNamespace:
    """A reader that never loaded the tokenizer; records the words it tokenises and those it counts."""
    from haiku.core.store import fulltext
    from haiku.core.store.word_stats import index_tokens

    seen = SimpleNamespace(tokenised=[], counted=[])
    count = fulltext._count_matches

    async def counting(table, word, chunks):
        seen.counted.append(word)
        return await count(table, word, chunks)

    monkeypatch.setattr(fulltext, "_count_matches", counting)
    monkeypatch.setattr(fulltext, "index_tokens", lambda word: seen.tokenised.append(word) or index_tokens(word))
    monkeypatch.setattr(fulltext, "sys", SimpleNamespace(modules={}))
    monkeypatch.setattr(fulltext, "_counted_unspelled", [0])
    return seen


# "membranes" stems like "membrane", which two chunks hold; no chunk spells it (nor "zebra").
WORDS, FREQUENCIES = ["membranes", "zebra", "cells"], {"membranes": 2, "zebra": 0, "cells": 2}


async def test_without_the_tokenizer_loaded_a_word_no_chunk_spells_is_counted_alike(kept_store, unspelled):
    stats = await kept_store.fts_statistics(WORDS)
    assert dict(stats.frequencies) == FREQUENCIES
    assert (sorted(unspelled.counted), unspelled.tokenised) == (["membranes", "zebra"], [])


async def test_a_process_that_counted_as_much_as_loading_costs_loads_the_tokenizer(kept_store, unspelled):
    from haiku.core.store import fulltext

    fulltext._counted_unspelled[0] = fulltext._COUNTS_BEFORE_TOKENIZER
    stats = await kept_store.fts_statistics(WORDS)
    assert dict(stats.frequencies) == FREQUENCIES
    assert (unspelled.counted, sorted(unspelled.tokenised)) == ([], ["membranes", "zebra"])
