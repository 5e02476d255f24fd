"""The chat session: /sources, /filter and /quit; state persists across questions (docs/cli.md)."""

from __future__ import annotations

from qa_scripted_model import COLLECTION, answer, call, chunk_ids_in, last_tool_result


async def _session(client, scripted_model):
    from haiku.rag.llm.model import ChatModel
    from haiku.rag.qa.chat import ChatSession

    lines: list[str] = []
    chat_model = ChatModel(client.config.qa.model)
    return ChatSession(client, chat_model, lines.append), lines, chat_model


async def test_sources_set_in_chat_narrow_every_later_question(open_client, model, qa_databases):
    model.play(
        call("search", query="bees vaccines", limit=5), answer("First."),
        call("search", query="bees vaccines", limit=5), answer("Second."),
    )
    async with open_client("papers", "wiki") as client:
        session, _, chat_model = await _session(client, model)
        await session.handle("/sources wiki")
        await session.handle("Bees?")
        await session.handle("And vaccines?")
        await chat_model.aclose()
    wiki_chunks = {ids[0] for ids in qa_databases.chunks["wiki"].values()}
    shown = [set(chunk_ids_in(last_tool_result(model.requests[i]))) for i in (1, 3)]
    assert shown == [wiki_chunks, wiki_chunks]


async def test_the_chat_conversation_carries_earlier_questions_to_the_model(open_client, model):
    model.play(answer("Bees dance."), answer("They dance to show flowers."))
    async with open_client("wiki") as client:
        session, _, chat_model = await _session(client, model)
        await session.handle("What do bees do?")
        await session.handle("Why?")
        await chat_model.aclose()
    contents = [m["content"] for m in model.requests[1]["messages"] if m["role"] in ("user", "assistant")]
    assert contents == ["What do bees do?", "Bees dance.", "Why?"]


async def test_a_chat_filter_reads_only_the_named_documents(open_client, model, qa_databases):
    volcano = qa_databases.doc("wiki", "Volcanoes")
    model.play(call("search", query="bees vaccines volcano plants", limit=10), answer("Lava."))
    async with open_client("papers", "wiki") as client:
        session, _, chat_model = await _session(client, model)
        await session.handle(f"/filter wiki:{volcano}")
        await session.handle("Anything?")
        await chat_model.aclose()
    shown = last_tool_result(model.requests[1])
    assert chunk_ids_in(shown) == [qa_databases.chunk("wiki", "Volcanoes")]


async def test_a_chat_filter_admits_a_shared_document_only_from_the_database_it_names(open_client, model, qa_databases):
    vaccines = qa_databases.doc("papers", "Vaccines")
    model.play(call("search", query="vaccines immune antigens", limit=10), answer("Vaccines."))
    async with open_client("papers", "mirror") as client:
        session, _, chat_model = await _session(client, model)
        await session.handle(f"/filter mirror:{vaccines}")
        await session.handle("Vaccines?")
        await chat_model.aclose()
    assert COLLECTION.findall(last_tool_result(model.requests[1])) == ["mirror"]


async def test_chat_filter_naming_an_unknown_database_is_an_error_line(open_client, model):
    async with open_client("papers", "wiki") as client:
        session, lines, chat_model = await _session(client, model)
        await session.handle("/filter nope:123")
        await chat_model.aclose()
    assert lines[-1].startswith("Error:") and "nope" in lines[-1]


async def test_slash_quit_ends_the_session(open_client, model):
    async with open_client("wiki") as client:
        session, _, chat_model = await _session(client, model)
        going_on = await session.handle("/quit")
        await chat_model.aclose()
    assert going_on is False
