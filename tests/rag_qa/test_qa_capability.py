"""The RAG capability: coverage, the search tool's schema and selection (docs/qa.md)."""

from __future__ import annotations

import re

import pytest
from qa_scripted_model import COLLECTION, answer, call, chunk_ids_in, last_tool_result

from haiku.core.errors import AmbiguousDatabaseError, UnknownDatabaseError
from haiku.rag.capability import RAGCapability, RAGState, create_capability
from haiku.rag.qa import ask


def _search_parameters(request) -> dict:
    (search,) = [t["function"] for t in request["tools"] if t["function"]["name"] == "search"]
    return search["parameters"]["properties"]


def _system(request) -> str:
    return request["messages"][0]["content"]


async def test_over_a_set_the_search_tool_takes_sources(open_client, model):
    model.play(answer("Hello."))
    async with open_client("papers", "wiki") as client:
        await ask(client, "Hi?")
    assert "sources" in _search_parameters(model.requests[0])


async def test_over_a_set_the_instructions_name_the_collections(open_client, model):
    model.play(answer("Hello."))
    async with open_client("papers", "wiki") as client:
        await ask(client, "Hi?")
    assert "Collections in this run: papers, wiki." in _system(model.requests[0])


async def test_over_one_database_the_search_tool_has_no_sources_parameter(open_client, model):
    model.play(answer("Hello."))
    async with open_client("wiki") as client:
        await ask(client, "Hi?")
    assert ("sources" in _search_parameters(model.requests[0]), "Collections in this run" in _system(model.requests[0])) == (
        False,
        False,
    )


async def test_a_question_narrowed_to_one_database_has_no_sources_parameter(open_client, model):
    model.play(answer("Hello."))
    async with open_client("papers", "wiki") as client:
        await ask(client, "Hi?", sources=["wiki"])
    assert "sources" not in _search_parameters(model.requests[0])


async def test_a_search_outside_the_question_selection_fails_listing_the_run_collections(open_client, model):
    model.play(call("search", query="vaccines", sources=["mirror"]), answer("Cannot."))
    async with open_client("papers", "wiki", "mirror") as client:
        await ask(client, "Vaccines?", sources=["papers", "wiki"])
    assert last_tool_result(model.requests[1]) == "Error: Unknown collection(s): mirror. This run covers: papers, wiki."


async def test_a_search_with_empty_sources_returns_no_results(open_client, model):
    model.play(call("search", query="vaccines", sources=[]), answer("Nothing."))
    async with open_client("papers", "wiki") as client:
        await ask(client, "Vaccines?")
    assert last_tool_result(model.requests[1]) == "No results found."


async def test_over_several_collections_every_result_has_a_collection_line_even_narrowed_to_one(open_client, model):
    model.play(call("search", query="bees volcano", sources=["wiki"]), answer("Bees."))
    async with open_client("papers", "wiki") as client:
        await ask(client, "Bees?")
    shown = last_tool_result(model.requests[1])
    assert COLLECTION.findall(shown) == ["wiki"] * len(chunk_ids_in(shown)) and chunk_ids_in(shown)


async def test_over_one_database_results_have_no_collection_line(open_client, model):
    model.play(call("search", query="bees volcano"), answer("Bees."))
    async with open_client("wiki") as client:
        await ask(client, "Bees?")
    shown = last_tool_result(model.requests[1])
    assert (chunk_ids_in(shown) != [], re.search(r"^Collection:", shown, re.MULTILINE)) == (True, None)


def test_create_capability_refuses_sources_beside_db_path(qa_config):
    with pytest.raises(AmbiguousDatabaseError):
        create_capability(db_path="x.lancedb", sources=["a"], config=qa_config("papers"))


async def test_create_capability_refuses_sources_beside_a_lent_client(open_client):
    async with open_client("papers", "wiki") as client:
        with pytest.raises(AmbiguousDatabaseError):
            create_capability(rag=client, sources=["papers"])


def test_create_capability_refuses_empty_sources(qa_config):
    with pytest.raises(ValueError, match=r"sources=\[\]"):
        create_capability(config=qa_config("papers", "wiki"), sources=[])


def test_create_capability_refuses_an_unknown_source(qa_config):
    with pytest.raises(UnknownDatabaseError, match="nope"):
        create_capability(config=qa_config("papers", "wiki"), sources=["nope"])


def test_from_spec_narrows_coverage_to_its_sources(qa_config):
    capability = RAGCapability.from_spec({"RAGCapability": {"sources": ["wiki"]}}, config=qa_config("papers", "wiki"))
    assert capability.source_names == ("wiki",)


async def test_a_capability_opening_its_own_client_answers_over_its_sources(qa_config, model):
    model.play(call("search", query="vaccines bees", limit=5), answer("Vaccines."))
    capability = create_capability(config=qa_config("papers", "wiki", "mirror"), sources=["papers", "mirror"])
    await capability.ask("Vaccines?")
    assert set(COLLECTION.findall(last_tool_result(model.requests[1]))) == {"papers", "mirror"}


async def test_a_question_selection_outside_the_capability_coverage_is_refused_by_name(qa_config, model):
    capability = create_capability(config=qa_config("papers", "wiki", "mirror"), sources=["papers"])
    with pytest.raises(UnknownDatabaseError, match="wiki"):
        await capability.ask("Bees?", RAGState(sources=["wiki"]))
    assert model.requests == []
