"""Answers stream from an OpenAI-compatible server as server-sent events (docs/qa.md, "Streaming")."""

from __future__ import annotations

from qa_scripted_model import answer, call, streamed


async def _complete(config, **kwargs):
    from haiku.rag.llm.model import ChatModel

    chat_model = ChatModel(config.qa.model)
    try:
        return await chat_model.complete([{"role": "user", "content": "Bees?"}], [], **kwargs)
    finally:
        await chat_model.aclose()


async def test_a_watched_reply_is_asked_for_as_a_stream_and_seen_growing(qa_config, model):
    model.play(streamed("Bees ", "dance ", "to show flowers."))
    seen: list[str] = []
    reply = await _complete(qa_config("wiki"), on_text=seen.append)
    assert (model.requests[0]["stream"], seen, reply.content) == (
        True,
        ["Bees ", "Bees dance ", "Bees dance to show flowers."],
        "Bees dance to show flowers.",
    )


async def test_an_unwatched_reply_is_asked_for_in_one_piece(qa_config, model):
    model.play(answer("Bees dance."))
    reply = await _complete(qa_config("wiki"))
    assert (model.requests[0]["stream"], reply.content) == (False, "Bees dance.")


async def test_streamed_tool_call_arguments_are_put_back_together(qa_config, model):
    model.play(call("search", query="waggle dance of honey bees", limit=3))
    reply = await _complete(qa_config("wiki"), on_text=lambda text: None)
    assert [(c.name, c.parsed_arguments()) for c in reply.tool_calls] == [
        ("search", {"query": "waggle dance of honey bees", "limit": 3})
    ]


async def test_a_server_that_does_not_stream_is_read_whole_and_shown_once(qa_config, model):
    model.play(answer("Bees dance."))
    model.streams = False
    seen: list[str] = []
    reply = await _complete(qa_config("wiki"), on_text=seen.append)
    assert (seen, reply.content) == (["Bees dance."], "Bees dance.")


async def test_a_streamed_answer_shows_no_thinking_and_ends_as_the_answer(open_client, model):
    from haiku.rag.capability import create_capability

    model.play(call("search", query="bees"), streamed("<think>the user ", "wants bees</think>", "Bees ", "dance."))
    seen: list[str] = []
    async with open_client("wiki") as client:
        text, _ = await create_capability(rag=client).ask("Bees?", on_text=seen.append)
    assert (text, [s for s in seen if s], any("think" in s or "user" in s for s in seen)) == (
        "Bees dance.",
        ["Bees", "Bees dance."],
        False,
    )


async def _lines(*lines: str):
    for line in lines:
        yield line


async def test_an_error_event_mid_stream_fails_naming_qa_model_base_url():
    import pytest

    from haiku.rag.llm.errors import ModelResponseError
    from haiku.rag.llm.stream import read_stream

    events = _lines('data: {"choices": [{"delta": {"content": "Bees"}}]}', "",
                    'data: {"error": {"message": "out of memory"}}')
    with pytest.raises(ModelResponseError, match=r"http://model/v1 \(qa.model.base_url\) failed mid-answer: out of memory"):
        await read_stream(events, lambda text: None, base_url="http://model/v1")


async def test_a_stream_of_something_other_than_json_fails_naming_qa_model_base_url():
    import pytest

    from haiku.rag.llm.errors import ModelResponseError
    from haiku.rag.llm.stream import read_stream

    with pytest.raises(ModelResponseError, match=r"\(qa.model.base_url\) streamed something that is not JSON: <html>"):
        await read_stream(_lines("data: <html>"), lambda text: None, base_url="http://model/v1")
