"""The work one query may cost is bounded (docs/fusion.md#the-rules, docs/configuration.md)."""

from __future__ import annotations

import time

import pytest
from rag_support import cli, config_data

from haiku.core.errors import QueryTooLongError
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
    assert all(len(store._fts_counts[2]) <= MAX_QUERY_WORDS for store in stores)
    assert elapsed < 10
