"""The search plans: one per (search type, fusion rule, reranked), chosen once per search."""

import pytest

from haiku.core.fusion.plan import PLANS, choose


def test_every_search_type_has_a_plan_under_every_rule_with_and_without_a_reranker():
    keys = {(t, r, k) for t in ("vector", "fts", "hybrid") for r in ("own", "rrf", "cosine") for k in (False, True)}
    assert set(PLANS) == keys


def test_one_database_keeps_its_own_scores_and_a_set_takes_the_configured_rule():
    assert choose("vector", "rrf", databases=1, reranked=False) is PLANS[("vector", "own", False)]
    assert choose("hybrid", "cosine", databases=1, reranked=False) is PLANS[("hybrid", "own", False)]
    assert choose("hybrid", "cosine", databases=3, reranked=False) is PLANS[("hybrid", "cosine", False)]


def test_only_plans_that_merge_full_text_scores_of_several_databases_want_the_federations_idf():
    merging = {key for key, plan in PLANS.items() if plan.merges_bm25}
    assert merging == {("fts", "rrf", False), ("fts", "cosine", False), ("hybrid", "rrf", False)}


def test_an_unknown_search_type_has_no_plan():
    with pytest.raises(ValueError, match="no search plan"):
        choose("semantic", "rrf", databases=2, reranked=False)
