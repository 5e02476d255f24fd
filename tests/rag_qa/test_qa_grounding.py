"""What an answer shows of its evidence: the cited chunk itself, its pages, and
whether the answer is grounded at all (docs/qa.md#citations)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from qa_cli_support import invoke as run_cli
from qa_cli_support import write_qa_config
from qa_scripted_model import answer, call, chunk_ids_in, last_tool_result

from haiku.rag.client import HaikuRAG
from haiku.rag.qa import ask

# A PDF-like document: two chunks on pages 3 and 4, short enough that a search
# result is expanded with its neighbour.
PRIME = "Prime the centrifugal pump by filling its casing with water before the first start."
CLOSE = "Afterwards close the bleed valve on the discharge flange."


@pytest.fixture(scope="module")
async def manual(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> dict[str, Any]:
    from haiku.core.config import config_from_dict
    from haiku.core.models import Chunk, Document
    from haiku.core.scope import DatabaseRef
    from haiku.core.store import Store

    root = tmp_path_factory.mktemp("manual")
    path = root / "manual.lancedb"
    config = config_from_dict({"storage": {"data_dir": str(root / "data")}})
    store = await Store.open(DatabaseRef.configured("manual", path), config, create=True)
    try:
        stored = await store.writer().documents.upsert_document(
            Document(uri="file:///manual/pump.pdf", title="Pump manual", content=f"{PRIME}\n\n{CLOSE}"),
            [Chunk(order=0, content=PRIME, page_numbers=[3]), Chunk(order=1, content=CLOSE, page_numbers=[4])],
            await embedder.embed_documents([PRIME, CLOSE]),
        )
        assert stored.id is not None
        ids = [c.id for c in await store.reads.get_chunks(stored.id)]
    finally:
        await store.close()
    return {"path": path, "root": root, "prime": ids[0], "close": ids[1]}


@pytest.fixture
def manual_client(manual, scripted_model, tmp_path):
    from haiku.core.config import config_from_dict

    config = config_from_dict({
        "storage": {"data_dir": str(tmp_path / "data")},
        "lancedb": {"databases": {"manual": str(manual["path"])}},
        "qa": {"model": {"name": "scripted", "base_url": scripted_model.base_url}, "request_limit": 8},
    })
    return lambda: HaikuRAG(config=config, read_only=True)


@pytest.fixture
def manual_config(manual, scripted_model, tmp_path) -> Path:
    return write_qa_config(
        tmp_path / "haiku.rag.yaml", {"manual": manual["path"]}, scripted_model.base_url, tmp_path / "data"
    )


def _search_prime() -> dict[str, Any]:
    return call("search", query="prime the pump casing with water", limit=1)


async def test_a_cited_search_hit_carries_its_own_text_and_pages_and_the_expanded_passage_as_context(
    manual, manual_client, model
):
    model.play(_search_prime(), call("cite", chunk_ids=[manual["prime"]]), answer("Fill it with water."))
    async with manual_client() as client:
        _, citations = await ask(client, "How do I prime the pump?")
    shown = last_tool_result(model.requests[1])
    assert (PRIME in shown and CLOSE in shown) is True  # the model read the expanded passage
    (citation,) = citations
    assert (citation.content, citation.page_numbers, PRIME in citation.context, CLOSE in citation.context) == (
        PRIME, [3], True, True
    )


async def test_a_chunk_the_model_saw_only_as_a_neighbour_is_cited_with_its_own_text_and_pages(
    manual, manual_client, model
):
    def cite_the_neighbour(request):
        hit = chunk_ids_in(last_tool_result(request))
        assert hit == [manual["prime"]], hit  # the search found the first chunk; the second came as context
        return call("cite", chunk_ids=[manual["close"]])

    model.play(_search_prime(), cite_the_neighbour, answer("Close the valve."))
    async with manual_client() as client:
        _, citations = await ask(client, "What after priming?")
    assert [(c.chunk_id, c.content, c.page_numbers) for c in citations] == [(manual["close"], CLOSE, [4])]


async def test_the_cite_tool_confirms_each_citation_with_its_database(manual, manual_client, model):
    model.play(_search_prime(), call("cite", chunk_ids=[manual["prime"]]), answer("Water."))
    async with manual_client() as client:
        await ask(client, "Prime?")
    assert last_tool_result(model.requests[2]) == "Recorded citations:\n[1] Pump manual (database: manual)"


def test_ask_full_citations_prints_the_cited_chunk_and_its_page_and_the_context_only_when_asked(
    manual, manual_config, model
):
    script = (_search_prime(), call("cite", chunk_ids=[manual["prime"]]), answer("Fill it with water."))
    model.play(*script)
    plain = run_cli("--config", str(manual_config), "ask", "Prime?", "--full-citations")
    model.play(*script)
    with_context = run_cli("--config", str(manual_config), "ask", "Prime?", "--full-citations", "--context")
    assert (plain.returncode, "    page: 3" in plain.stdout, PRIME in plain.stdout, CLOSE in plain.stdout) == (
        0, True, True, False
    ), plain.stdout + plain.stderr
    assert ("    context:" in with_context.stdout, CLOSE in with_context.stdout) == (True, True), with_context.stdout


def test_ask_json_gives_the_answer_its_citations_and_that_it_is_grounded(manual, manual_config, model):
    model.play(_search_prime(), call("cite", chunk_ids=[manual["prime"]]), answer("Fill it with water."))
    done = run_cli("--config", str(manual_config), "ask", "Prime?", "--json")
    data = json.loads(done.stdout)
    assert (
        data["question"], data["answer"], data["grounded"], data["grounding"],
        [(c["source"], c["chunk_id"], c["content"], c["page_numbers"]) for c in data["citations"]],
    ) == ("Prime?", "Fill it with water.", True, "cited", [("manual", manual["prime"], PRIME, [3])]), done.stderr


@pytest.mark.parametrize(
    ("script", "grounding", "note"),
    [
        ((), "not-searched", "the model answered without searching the documents or citing them"),
        ((_search_prime(),), "not-cited", "the model searched the documents but cited none of them"),
        ((_search_prime(), call("cite", chunk_ids=[])), "declared-ungrounded",
         "the model declared the answer not grounded in the documents"),
    ],
    ids=["no-search", "no-citation", "declared"],
)
async def test_an_answer_that_cites_nothing_says_it_is_ungrounded_and_why(
    manual_client, model, script, grounding, note
):
    model.play(*script, answer("From memory."))
    async with manual_client() as client:
        result = await ask(client, "Prime?")
    reply, citations = result
    assert (reply, citations, result.grounded, result.grounding, result.note) == (
        "From memory.", [], False, grounding, note
    )


def test_ask_says_in_text_and_json_that_an_answer_without_a_search_is_ungrounded(manual_config, model):
    model.play(answer("From memory."))
    text = run_cli("--config", str(manual_config), "ask", "Prime?")
    model.play(answer("From memory."))
    as_json = run_cli("--config", str(manual_config), "ask", "Prime?", "--json")
    data = json.loads(as_json.stdout)
    assert (
        text.stdout.splitlines()[-2:],
        (data["grounded"], data["grounding"], data["citations"]),
    ) == (
        ["Citations: none", "Not grounded: the model answered without searching the documents or citing them."],
        (False, "not-searched", []),
    ), text.stdout + text.stderr


async def test_chat_says_when_an_answer_is_not_grounded(manual_client, model):
    from haiku.rag.llm.model import ChatModel
    from haiku.rag.qa.chat import ChatSession

    model.play(_search_prime(), answer("From memory."))
    written: list[str] = []
    async with manual_client() as client:
        chat_model = ChatModel(client.config.qa.model)
        try:
            await ChatSession(client, chat_model, written.append).handle("Prime?")
        finally:
            await chat_model.aclose()
    assert written == [
        "From memory.", "", "Citations: none", "Not grounded: the model searched the documents but cited none of them."
    ]
