"""Placing citations in the database they came from (docs/qa.md).

``mirror`` is a copy of ``papers``: every id in one is in the other.
"""

from __future__ import annotations

from qa_scripted_model import answer, call, chunk_ids_in, last_tool_result, tool_results

from haiku.rag.capability import RAGState, create_capability
from haiku.rag.qa import ask


def _cite_first_result(request):
    return call("cite", chunk_ids=chunk_ids_in(last_tool_result(request))[:1])


async def test_citing_an_id_search_returned_from_two_databases_is_sent_back_as_a_retry(open_client, model):
    model.play(
        call("search", query="chlorophyll sunlight glucose", limit=2),
        _cite_first_result,
        call("cite", chunk_ids=[]),
        answer("Plants make glucose."),
    )
    async with open_client("papers", "mirror") as client:
        _, citations = await ask(client, "How do plants make sugar?")
    retry = last_tool_result(model.requests[2])
    assert (retry.startswith("Error: chunk id"), "more than one database (papers, mirror)" in retry, citations) == (
        True,
        True,
        [],
    )


async def test_an_unreturned_id_held_by_one_selected_database_is_cited_from_it(open_client, model, qa_databases):
    bees = qa_databases.chunk("wiki", "Honey bees")
    model.play(call("cite", chunk_ids=[bees]), answer("Bees dance."))
    async with open_client("papers", "wiki") as client:
        _, citations = await ask(client, "Bees?")
    assert [(c.source, c.chunk_id, c.document_title) for c in citations] == [("wiki", bees, "Honey bees")]


async def test_an_unreturned_id_held_by_two_selected_databases_is_sent_back_as_a_retry(
    open_client, model, qa_databases
):
    shared = qa_databases.chunk("papers", "Vaccines")
    model.play(call("cite", chunk_ids=[shared]), call("cite", chunk_ids=[]), answer("Unsure."))
    async with open_client("papers", "mirror") as client:
        _, citations = await ask(client, "Vaccines?")
    assert ("more than one database (papers, mirror)" in last_tool_result(model.requests[1]), citations) == (True, [])


async def test_the_cite_fallback_never_asks_a_database_outside_the_question_sources(
    open_client, model, qa_databases
):
    # mirror holds the id too; asking it would make the citation ambiguous.
    shared = qa_databases.chunk("papers", "Vaccines")
    model.play(call("cite", chunk_ids=[shared]), answer("Vaccines train immunity."))
    async with open_client("papers", "mirror", "wiki") as client:
        _, citations = await ask(client, "Vaccines?", sources=["papers", "wiki"])
    assert [(c.source, c.chunk_id) for c in citations] == [("papers", shared)]


async def test_a_shared_id_that_nothing_cites_causes_no_error(open_client, model, qa_databases):
    bees = qa_databases.chunk("wiki", "Honey bees")
    model.play(
        call("search", query="vaccines antigens immune memory", limit=6),
        call("cite", chunk_ids=[bees]),
        answer("Bees dance."),
    )
    async with open_client("papers", "mirror", "wiki") as client:
        _, citations = await ask(client, "Vaccines and bees?")
    shown = chunk_ids_in(last_tool_result(model.requests[1]))
    assert len(shown) > len(set(shown))  # the search did show a shared id
    assert ([c.source for c in citations], last_tool_result(model.requests[2]).startswith("Recorded")) == (
        ["wiki"],
        True,
    )


async def test_citing_from_b_an_id_cited_from_a_earlier_in_the_conversation_is_rejected(open_client, model):
    model.play(
        call("search", query="protein folding amino acids", limit=1),
        _cite_first_result,
        answer("Proteins fold."),
        call("search", query="protein folding amino acids", limit=1),
        _cite_first_result,
        call("cite", chunk_ids=[]),
        answer("Proteins fold, says the mirror."),
    )
    async with open_client("papers", "mirror") as client:
        capability = create_capability(rag=client)
        state = RAGState(sources=["papers"])
        await capability.ask("Protein folding?", state)
        state.sources = ["mirror"]
        _, second = await capability.ask("And in the mirror?", state)
    retry = last_tool_result(model.requests[5])
    assert ("already cited from another database" in retry, second) == (True, [])


async def test_an_id_within_similarity_of_one_retrieved_id_is_snapped_to_it(open_client, model):
    def cite_with_a_typo(request):
        real = chunk_ids_in(last_tool_result(request))[0]
        return call("cite", chunk_ids=[real[:-2] + ("00" if real[-2:] != "00" else "11")])

    model.play(call("search", query="waggle dance hive", limit=1), cite_with_a_typo, answer("Bees dance."))
    async with open_client("wiki") as client:
        _, citations = await ask(client, "Bees?")
    shown = chunk_ids_in(last_tool_result(model.requests[1]))
    assert [c.chunk_id for c in citations] == shown[:1]


async def test_an_id_matching_nothing_is_sent_back_asking_for_verbatim_ids(open_client, model):
    model.play(call("cite", chunk_ids=["not-a-chunk"]), call("cite", chunk_ids=[]), answer("Unsure."))
    async with open_client("wiki") as client:
        await ask(client, "Bees?")
    assert "verbatim" in last_tool_result(model.requests[1])


async def test_cite_with_no_ids_declares_the_answer_ungrounded(open_client, model):
    model.play(call("cite", chunk_ids=[]), answer("I do not know."))
    async with open_client("wiki") as client:
        _, citations = await ask(client, "What is the capital of Mars?")
    assert (tool_results(model.requests[1]), citations) == (
        ["Recorded: the answer is not grounded in the documents."],
        [],
    )


async def test_the_citation_index_persists_across_questions_of_a_conversation(open_client, model, qa_databases):
    bees, lava = qa_databases.chunk("wiki", "Honey bees"), qa_databases.chunk("wiki", "Volcanoes")
    model.play(
        call("cite", chunk_ids=[bees]),
        answer("Bees dance."),
        call("cite", chunk_ids=[lava, bees]),
        answer("Lava flows; bees dance."),
    )
    async with open_client("wiki") as client:
        capability = create_capability(rag=client)
        state = RAGState()
        await capability.ask("Bees?", state)
        _, second = await capability.ask("Lava and bees?", state)
    assert [(c.index, c.chunk_id) for c in second] == [(2, lava), (1, bees)]
