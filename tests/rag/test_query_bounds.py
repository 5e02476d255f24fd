"""The work one query may cost is bounded: its length, its limit (docs/configuration.md#search)."""

from __future__ import annotations

import time

import pytest
from rag_support import config_data
from rag_support import invoke as cli

from haiku.core.config import config_from_dict
from haiku.core.errors import InvalidConfigError, LimitTooLargeError, QueryTooLongError
from haiku.core.store.fulltext import MAX_QUERY_WORDS, query_words
from haiku.rag.client import HaikuRAG
from support import write_config


def test_a_query_past_max_query_chars_fails_at_once_with_a_clear_error(built, tmp_path):
    data = config_data(tmp_path / "data", {"papers": built["papers"]}, search={"max_query_chars": 100})
    config = write_config(tmp_path / "c.yaml", data)
    result = cli("search", "x" * 101, config=config)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "Error: the query is 101 characters long; a search takes at most 100 (search.max_query_chars): shorten it"
    )


async def test_the_client_refuses_a_query_past_the_default_maximum(two_db):
    async with HaikuRAG(config=two_db, read_only=True) as client:
        with pytest.raises(QueryTooLongError, match="8,192"):
            await client.search("word " * 2000, search_type="fts")


def test_a_query_counts_at_most_its_first_max_query_words_distinct_words():
    text = " ".join(f"w{i} w{i}" for i in range(1000))
    assert query_words(text) == [f"w{i}" for i in range(MAX_QUERY_WORDS)]


async def test_a_query_of_thousands_of_distinct_words_over_two_databases_costs_what_64_do(two_db):
    long_query = " ".join(f"w{i}" for i in range(1500))  # about 8 kB, every word distinct
    async with HaikuRAG(config=two_db, read_only=True) as client:
        started = time.monotonic()
        await client.search(long_query, search_type="fts")
        elapsed = time.monotonic() - started
        stores = [c.store for c in await client.clients_covering(None)]
    assert all(len(store.fulltext.counts[2]) <= MAX_QUERY_WORDS for store in stores)
    assert elapsed < 10


def test_a_limit_past_search_max_limit_fails_search_and_list_in_one_line(built, tmp_path):
    config = write_config(tmp_path / "c.yaml", config_data(tmp_path / "data", {"papers": built["papers"]}))
    search = cli("search", "light", "-s", "fts", "--limit", str(10**12), config=config)
    listing = cli("list", "--limit", str(10**12), config=config)
    expected = (
        "Error: --limit 1,000,000,000,000 is more than the 1,000 results one call returns "
        "(search.max_limit): ask for fewer\n"
    )
    assert [(search.returncode, search.stderr), (listing.returncode, listing.stderr)] == [(1, expected)] * 2


async def test_the_client_bounds_search_and_listing_limits_and_offsets(two_db):
    async with HaikuRAG(config=two_db, read_only=True) as client:
        with pytest.raises(LimitTooLargeError, match=r"100,000,000 is more than the 1,000"):
            await client.search("light", limit=100_000_000, search_type="fts")
        with pytest.raises(LimitTooLargeError, match=r"\(search.max_limit\)"):
            await client.list_documents(limit=1001)
        with pytest.raises(LimitTooLargeError, match="offset"):
            await client.list_documents(offset=10**12)
        assert len(await client.list_documents(limit=1000)) == 6


def test_search_limit_above_search_max_limit_is_a_configuration_error():
    with pytest.raises(InvalidConfigError, match=r"search: .*max_limit \(10\)"):
        config_from_dict({"search": {"limit": 20, "max_limit": 10}})
