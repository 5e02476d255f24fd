"""The federation's inverse document frequency (haiku.core.fusion.global_idf; docs/fusion.md)."""

from __future__ import annotations

import math

import pytest

from haiku.core import fusion
from haiku.core.fusion import bm25_idf
from haiku.core.store.fulltext import TermStatistics


def test_bm25_idf_is_lancedbs_formula_and_stays_positive_at_any_frequency():
    assert bm25_idf(2, 10) == pytest.approx(math.log(1 + 8.5 / 2.5))
    assert bm25_idf(10, 10) > 0
    assert bm25_idf(11, 10) == bm25_idf(10, 10)  # a count above N is read as N


def test_global_idf_boosts_turn_each_databases_idf_into_the_idf_over_all_of_them():
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
    boosts = fusion.global_idf_boosts([TermStatistics(10, {"x": 0, "y": 2}), TermStatistics(10, {"x": 3, "y": 0})])
    assert [set(b) for b in boosts] == [{"y"}, {"x"}]


def test_global_idf_over_equal_databases_changes_nothing_relative_between_them():
    same = TermStatistics(50, {"w": 5})
    first, second = fusion.global_idf_boosts([same, same])
    assert first == second
