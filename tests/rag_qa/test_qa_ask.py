"""client.ask: selection checked by name first, citations naming their database (docs/qa.md)."""

from __future__ import annotations

import socket

import pytest
from qa_scripted_model import answer, call, chunk_ids_in, last_tool_result

from haiku.core.errors import UnknownDatabaseError
from haiku.rag.qa import ask


async def test_ask_with_an_unknown_source_raises_before_any_model_request(open_client, model):
    model.play(answer("should never be asked"))
    async with open_client("papers", "wiki") as client:
        with pytest.raises(UnknownDatabaseError, match="nope"):
            await ask(client, "What do bees do?", sources=["nope"])
    assert model.requests == []


async def test_ask_with_empty_sources_searches_nothing_and_cites_nothing(open_client, model):
    model.play(call("search", query="photosynthesis"), answer("Nothing was searched."))
    async with open_client("papers", "wiki") as client:
        reply, citations = await ask(client, "How do plants make sugar?", sources=[])
    assert (reply, citations, last_tool_result(model.requests[1])) == (
        "Nothing was searched.",
        [],
        "No results found.",
    )


async def test_every_citation_names_the_database_its_chunk_came_from(open_client, model):
    def cite_everything(request):
        return call("cite", chunk_ids=chunk_ids_in(last_tool_result(request)))

    model.play(
        call("search", query="chlorophyll sunlight glucose plants and volcanic magma eruptions", limit=6),
        cite_everything,
        answer("Plants photosynthesise; volcanoes erupt."),
    )
    async with open_client("papers", "wiki") as client:
        _, citations = await ask(client, "Plants and volcanoes?")
        holders = []
        for citation in citations:
            readers = await client.clients_covering(None)
            found = [r.source for r in readers if await r.get_chunk_by_id(citation.chunk_id) is not None]
            holders.append((citation.source, found))
    assert {source for source, _ in holders} == {"papers", "wiki"}
    assert all([source] == found for source, found in holders)


async def test_ask_cites_in_first_cited_order_with_indexes_from_one(open_client, model, qa_databases):
    bees, lava = qa_databases.chunk("wiki", "Honey bees"), qa_databases.chunk("wiki", "Volcanoes")
    model.play(call("cite", chunk_ids=[bees, lava]), answer("Bees dance; lava flows."))
    async with open_client("wiki") as client:
        _, citations = await ask(client, "Bees and lava?")
    assert [(c.index, c.chunk_id) for c in citations] == [(1, bees), (2, lava)]


async def test_a_model_that_cannot_be_reached_is_an_error_naming_qa_model_base_url(open_client):
    from haiku.rag.qa import ModelUnavailableError

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed_port = s.getsockname()[1]
    url = f"http://127.0.0.1:{closed_port}/v1"
    async with open_client("wiki", qa={"model": {"base_url": url}}) as client:
        with pytest.raises(ModelUnavailableError, match=r"http://127\.0\.0\.1:\d+/v1 \(qa\.model\.base_url\)"):
            await ask(client, "Anyone there?")


async def test_a_model_error_status_is_an_error_naming_the_model(open_client, model):
    from haiku.rag.qa import ModelResponseError

    model.play()  # an empty script answers HTTP 500
    async with open_client("wiki") as client:
        with pytest.raises(ModelResponseError, match="HTTP 500 for model 'scripted'"):
            await ask(client, "Anyone there?")


async def test_the_last_request_allowed_by_qa_request_limit_takes_no_tool_calls(open_client, model):
    loop = [call("search", query="bees")] * 2
    model.play(*loop, answer("Bees dance."))
    async with open_client("wiki", qa={"request_limit": 3}) as client:
        await ask(client, "Bees?")
    assert [r.get("tool_choice") for r in model.requests] == ["auto", "auto", "none"]


async def test_a_model_still_calling_tools_at_qa_request_limit_is_an_error(open_client, model):
    from haiku.rag.qa import RequestLimitError

    model.play(*[call("search", query="bees")] * 2)
    async with open_client("wiki", qa={"request_limit": 2}) as client:
        with pytest.raises(RequestLimitError, match=r"qa\.request_limit"):
            await ask(client, "Bees?")


async def test_ask_opens_no_second_connection_and_leaves_the_client_open(open_client, model, monkeypatch):
    from haiku.core.store import Store

    opened: list[str | None] = []
    original = Store.open.__func__

    async def counting_open(cls, ref, *args, **kwargs):
        opened.append(ref.name)
        return await original(cls, ref, *args, **kwargs)

    model.play(call("search", query="bees"), answer("Bees dance."))
    async with open_client("wiki") as client:
        monkeypatch.setattr(Store, "open", classmethod(counting_open))
        await ask(client, "Bees?")
        assert (opened, client.is_closed) == ([], False)


async def test_reasoning_text_is_stripped_from_the_answer(open_client, model):
    model.play(answer("<think>the user wants bees</think>\nBees dance."))
    async with open_client("wiki") as client:
        reply, _ = await ask(client, "Bees?")
    assert reply == "Bees dance."
