"""One definition of the search types, for the store, the client and the CLI (docs/client.md)."""

from __future__ import annotations

import typing

from haiku.core.models import SEARCH_TYPES, SearchType


def test_the_store_the_client_and_the_cli_take_the_one_search_type():
    from haiku.core.store import Store
    from haiku.rag.cli import search_commands
    from haiku.rag.client import HaikuRAG

    store = typing.get_type_hints(Store.search)["search_type"]
    client = typing.get_type_hints(HaikuRAG.search)["search_type"]
    cli = typing.get_type_hints(search_commands.search)["search_type"]
    assert (store is SearchType, typing.get_args(client), cli is SearchType) == (True, (SearchType, type(None)), True)
    assert SEARCH_TYPES == ("vector", "fts", "hybrid")
