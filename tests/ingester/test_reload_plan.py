"""What a reload may change (docs/ingester.md), decided without touching any database."""

from __future__ import annotations

import pytest

from haiku.core.config import config_from_dict
from haiku.ingester.errors import ReloadRefusedError
from haiku.ingester.reload import plan_reload


def config(tmp_path, databases: dict[str, str], ingested: dict[str, str], **sections):
    data = {
        "storage": {"data_dir": str(tmp_path / "data")},
        "lancedb": {"databases": {n: str(tmp_path / loc) for n, loc in databases.items()}},
        "ingester": {"databases": {n: {"sources": [{"root": str(tmp_path / r)}]} for n, r in ingested.items()}},
    }
    data.update(sections)
    return config_from_dict(data)


def test_a_new_ingested_database_is_added(tmp_path):
    old = config(tmp_path, {"a": "a.lancedb"}, {"a": "A"})
    new = config(tmp_path, {"a": "a.lancedb", "c": "c.lancedb"}, {"a": "A", "c": "C"})
    plan = plan_reload(old, new, ["a"])
    assert (plan.added, plan.removed) == (["c"], [])


def test_a_database_dropped_from_ingester_databases_is_removed(tmp_path):
    old = config(tmp_path, {"a": "a.lancedb", "b": "b.lancedb"}, {"a": "A", "b": "B"})
    new = config(tmp_path, {"a": "a.lancedb", "b": "b.lancedb"}, {"a": "A"})
    assert plan_reload(old, new, ["a", "b"]).removed == ["b"]


def test_a_database_whose_sources_changed_is_removed_and_added_again(tmp_path):
    old = config(tmp_path, {"a": "a.lancedb"}, {"a": "A"})
    new = config(tmp_path, {"a": "a.lancedb"}, {"a": "A2"})
    plan = plan_reload(old, new, ["a"])
    assert (plan.removed, plan.added) == (["a"], ["a"])


def test_a_database_whose_location_changed_is_removed_and_added_again(tmp_path):
    old = config(tmp_path, {"a": "a.lancedb"}, {"a": "A"})
    new = config(tmp_path, {"a": "elsewhere.lancedb"}, {"a": "A"})
    assert plan_reload(old, new, ["a"]).removed == ["a"]


def test_an_unchanged_configuration_changes_nothing(tmp_path):
    old = config(tmp_path, {"a": "a.lancedb"}, {"a": "A"})
    assert plan_reload(old, config(tmp_path, {"a": "a.lancedb"}, {"a": "A"}), ["a"]).empty


def test_changes_the_ingester_does_not_use_are_taken_beside_a_database_change(tmp_path):
    old = config(tmp_path, {"a": "a.lancedb"}, {"a": "A"})
    new = config(
        tmp_path, {"a": "a.lancedb", "c": "c.lancedb"}, {"a": "A", "c": "C"},
        search={"limit": 9}, qa={"request_limit": 3},
    )
    plan = plan_reload(old, new, ["a"])
    assert (plan.added, plan.unused) == (["c"], ["qa", "search.limit"])


def test_a_changed_vector_index_metric_is_refused_the_ingester_builds_the_index_with_it(tmp_path):
    old = config(tmp_path, {"a": "a.lancedb"}, {"a": "A"})
    new = config(tmp_path, {"a": "a.lancedb"}, {"a": "A"}, search={"vector_index_metric": "l2"})
    with pytest.raises(ReloadRefusedError, match=r"search\.vector_index_metric.*restart"):
        plan_reload(old, new, ["a"])


def test_changed_worker_settings_are_refused_naming_the_subsection(tmp_path):
    old = config(tmp_path, {"a": "a.lancedb"}, {"a": "A"})
    new = config(tmp_path, {"a": "a.lancedb"}, {"a": "A"})
    new.ingester.workers.worker_count = 7
    with pytest.raises(ReloadRefusedError, match=r"ingester\.workers"):
        plan_reload(old, new, ["a"])
