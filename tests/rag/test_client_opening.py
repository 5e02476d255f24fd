"""Lazy, concurrent opens and how failures name the database (docs/storage.md)."""

from __future__ import annotations

import asyncio
import time

import pytest
from rag_support import build_config

from haiku.core.errors import (
    ConfigMismatchError,
    MigrationRequiredError,
    SourceUnavailableError,
    TagError,
)
from haiku.rag.client import HaikuRAG, _opening


@pytest.fixture
def with_missing(built, tmp_path):
    missing = tmp_path / "missing.lancedb"
    config = build_config(tmp_path / "data", {"good": str(built["papers"]), "missing": str(missing)})
    return config, missing


async def test_a_missing_database_no_query_selects_never_fails_a_query_nor_is_created(with_missing):
    config, missing = with_missing
    async with HaikuRAG(config=config) as client:
        results = await client.search("light energy in plants", sources=["good"])
    assert results and {r.source for r in results} == {"good"}
    assert not missing.exists()


async def test_selecting_a_missing_database_names_it_and_carries_no_chain(with_missing):
    config, missing = with_missing
    async with HaikuRAG(config=config) as client:
        with pytest.raises(SourceUnavailableError) as caught:
            await client.search("light", sources=["missing"])
    error = caught.value
    assert "missing" in str(error)
    assert str(missing) not in str(error) and str(missing.resolve()) not in str(error)
    assert error.__cause__ is None and error.__context__ is None
    assert not missing.exists()


async def test_a_configured_name_with_no_database_is_unavailable_and_nothing_is_created(tmp_path):
    location = tmp_path / "nothing" / "papers.lancedb"
    config = build_config(tmp_path / "data", {"papers": str(location)})
    with pytest.raises(SourceUnavailableError, match="create it by opening it with create=True"):
        async with HaikuRAG(config=config):
            pass
    assert not location.exists() and not location.parent.exists()
    async with HaikuRAG(config=config, create=True) as client:
        assert client.source == "papers"
    assert location.is_dir()


async def test_a_missing_db_path_error_carries_the_absolute_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError) as caught:
        async with HaikuRAG(db_path="rel/foo.lancedb", config=build_config(tmp_path / "data")):
            pass
    assert str((tmp_path / "rel" / "foo.lancedb").resolve()) in str(caught.value)


@pytest.fixture
def three_db(built, tmp_path):
    return build_config(
        tmp_path / "data",
        {"a": str(built["papers"]), "b": str(built["wiki"]), "c": str(built["papers"].parent / "papers.lancedb")},
    )


async def test_three_cold_databases_open_together_so_a_first_query_costs_the_slowest_open(three_db, monkeypatch):
    """Each open is slowed by T through the documented test hook (``_opening.before_open``).

    The opens must overlap (every one starts before any finishes), and the first
    search takes about T, far below the 3T that opening one after another costs.
    Margins are generous: this shows concurrency, it is not a timing benchmark.
    """
    delay = 2.0
    spans: dict[str, list[float]] = {}

    async def slow(ref):
        spans[ref.name] = [time.perf_counter()]
        await asyncio.sleep(delay)
        spans[ref.name].append(time.perf_counter())

    monkeypatch.setattr(_opening, "before_open", slow)
    # The query model is already loaded for the session (the `built` fixture used it).
    async with HaikuRAG(config=three_db) as client:
        started = time.perf_counter()
        results = await client.search("light energy in plants", search_type="vector")
        elapsed = time.perf_counter() - started
    assert {r.source for r in results} <= {"a", "b", "c"} and results
    assert set(spans) == {"a", "b", "c"}
    assert max(s[0] for s in spans.values()) < min(s[1] for s in spans.values())
    assert elapsed < 2 * delay, f"first query took {elapsed:.2f}s with three {delay}s opens"


async def test_when_one_of_three_opens_fails_the_others_stay_open(built, tmp_path, open_log):
    config = build_config(
        tmp_path / "data",
        {"a": str(built["papers"]), "b": str(tmp_path / "gone.lancedb"), "c": str(built["wiki"])},
    )
    async with HaikuRAG(config=config) as client:
        with pytest.raises(SourceUnavailableError, match="'b'"):
            await client.search("light energy", search_type="fts")
        assert sorted(open_log) == ["a", "b", "c"]
        results = await client.search("light energy", sources=["a", "c"], search_type="fts")
        assert results
        assert sorted(open_log) == ["a", "b", "c"], "a and c stayed open: nothing reopened"


async def test_migration_required_keeps_its_type_and_names_the_database(built, tmp_path, monkeypatch):
    from haiku.core.store import MIGRATIONS, Migration

    async def step(store):
        return None

    monkeypatch.setattr("haiku.core.store.migrations.MIGRATIONS", [*MIGRATIONS, Migration(99, "test step", step)])
    config = build_config(tmp_path / "data", {"papers": str(built["papers"]), "wiki": str(built["wiki"])})
    async with HaikuRAG(config=config, read_only=True) as client:
        with pytest.raises(MigrationRequiredError, match="'wiki'"):
            await client.search("pasta", sources=["wiki"], search_type="fts")


async def test_config_mismatch_keeps_its_type_and_names_the_database(built, wiki_other_dim, tmp_path):
    config = build_config(tmp_path / "data", {"papers": str(built["papers"]), "wiki": str(wiki_other_dim)})
    async with HaikuRAG(config=config, read_only=True) as client:
        with pytest.raises(ConfigMismatchError, match="'wiki'"):
            await client.search("pasta", sources=["wiki"], search_type="fts")


async def test_tag_error_keeps_its_type_and_names_the_database(built, tmp_path):
    config = build_config(
        tmp_path / "data",
        {"papers": str(built["papers"]), "wiki": {"location": str(built["wiki"]), "tag": "never-made"}},
    )
    async with HaikuRAG(config=config) as client:
        with pytest.raises(TagError, match="'wiki'"):
            await client.search("pasta", sources=["wiki"], search_type="fts")


async def test_a_search_over_two_of_six_configured_databases_opens_only_those_two(built, tmp_path, open_log):
    from support import copy_database

    databases = {
        f"db{i}": str(copy_database(built["papers" if i % 2 == 0 else "wiki"], tmp_path / f"db{i}.lancedb"))
        for i in range(6)
    }
    config = build_config(tmp_path / "data", databases)
    async with HaikuRAG(config=config, read_only=True) as client:
        results = await client.search("pasta in salted water", sources=["db1", "db4"], limit=4)
    assert sorted(open_log) == ["db1", "db4"]
    assert results and {r.source for r in results} <= {"db1", "db4"}
