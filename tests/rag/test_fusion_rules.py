"""The federation's own fusion input: its inverse document frequency (docs/fusion.md)."""

from __future__ import annotations

import pytest

from haiku.rag.client import fusion


def test_global_idf_boosts_turn_each_databases_idf_into_the_idf_over_all_of_them():
    from haiku.core.store.fulltext import TermStatistics, bm25_idf

    stats = [TermStatistics(100, {"rare": 1, "common": 50}), TermStatistics(300, {"rare": 9, "common": 150})]
    boosts = fusion.global_idf_boosts(stats)
    for database, factors in zip(stats, boosts, strict=True):
        n = database.chunks
        for word, df in database.frequencies.items():
            global_df = 10 if word == "rare" else 200
            assert factors[word] * bm25_idf(df, n) == pytest.approx(bm25_idf(global_df, 400))
    # the database where "rare" is rarest overrates it alone, so it is damped there and raised in the other
    assert boosts[0]["rare"] < 1 < boosts[1]["rare"]


def test_global_idf_gives_no_factor_for_a_word_a_database_does_not_hold():
    from haiku.core.store.fulltext import TermStatistics

    boosts = fusion.global_idf_boosts([TermStatistics(10, {"x": 0, "y": 2}), TermStatistics(10, {"x": 3, "y": 0})])
    assert [set(b) for b in boosts] == [{"y"}, {"x"}]


def test_global_idf_over_equal_databases_changes_nothing_relative_between_them():
    from haiku.core.store.fulltext import TermStatistics

    same = TermStatistics(50, {"w": 5})
    first, second = fusion.global_idf_boosts([same, same])
    assert first == second
