"""The chat app, driven headless with Textual's pilot over real databases and the scripted
model on 127.0.0.1 (docs/cli.md, "chat")."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable

import pytest
from qa_scripted_model import answer, call, chunk_ids_in, last_tool_result, streamed

pytestmark = pytest.mark.slow


@contextlib.asynccontextmanager
async def running(client):
    from haiku.rag.apps.chat.app import ChatApp
    from haiku.rag.llm.model import ChatModel

    chat_model = ChatModel(client.config.qa.model)
    app = ChatApp(client, chat_model)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            yield app, pilot
    finally:
        await chat_model.aclose()


async def until(pilot, condition: Callable[[], object], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the app never got there")
        await pilot.pause(0.05)


async def submit(app, pilot, text: str) -> None:
    from textual.widgets import Input

    app.query_one("#prompt", Input).value = text
    await pilot.press("enter")
    await pilot.pause()


def shown(app, kind: str) -> list[str]:
    """The text of the conversation's lines of one kind: question, answer, note, error."""
    return [str(w.content) for w in app.query(f"#conversation Static.{kind}")]


def answers(app) -> list[str]:
    return [m.source for m in app.query("#conversation Markdown.answer")]


def answered(app) -> bool:
    """Every answer in the conversation has been rendered (Markdown fills in after mounting)."""
    shown_answers = answers(app)
    return bool(shown_answers) and all(shown_answers)


def citation_lines(app) -> list[str]:
    from textual.widgets import Label, ListView

    return [str(item.query_one(Label).content) for item in app.query_one("#citations", ListView).children]


def dialog_text(app) -> str:
    from textual.widgets import Static

    return str(app.screen.query_one("#text", Static).content)


async def test_an_answer_streams_into_the_conversation_then_shows_with_citations_named_by_database(
    open_client, model, qa_databases
):
    hold = threading.Event()
    model.play(call("cite", chunk_ids=[qa_databases.chunk("wiki", "Honey bees")]),
               streamed("Bees ", "dance.", hold=hold))
    async with open_client("papers", "wiki") as client, running(client) as (app, pilot):
        await submit(app, pilot, "What do bees do?")
        await until(pilot, lambda: shown(app, "answer") == ["Bees"])
        partial = (shown(app, "answer"), answers(app))
        hold.set()
        await until(pilot, lambda: answered(app))
        assert (partial, shown(app, "question"), answers(app), shown(app, "answer"), citation_lines(app)) == (
            (["Bees"], []),
            ["What do bees do?"],
            ["Bees dance."],
            [],
            ["[1] wiki: Honey bees"],
        )


async def test_over_one_database_the_citations_name_none(open_client, model, qa_databases):
    model.play(call("cite", chunk_ids=[qa_databases.chunk("wiki", "Honey bees")]), answer("Bees dance."))
    async with open_client("wiki") as client, running(client) as (app, pilot):
        await submit(app, pilot, "Bees?")
        await until(pilot, lambda: answered(app))
        assert citation_lines(app) == ["[1] Honey bees"]


async def test_escape_cancels_the_answer_in_progress_and_the_conversation_forgets_the_question(open_client, model):
    hold = threading.Event()
    model.play(streamed("Bees ", "dance.", hold=hold), answer("Again."))
    async with open_client("wiki") as client, running(client) as (app, pilot):
        try:
            await submit(app, pilot, "Bees?")
            await until(pilot, lambda: shown(app, "answer") == ["Bees"])
            await pilot.press("escape")
            await until(pilot, lambda: "Answer cancelled." in shown(app, "note"))
            forgotten = list(app.session.state.messages)
        finally:
            hold.set()
        await submit(app, pilot, "Once more?")
        await until(pilot, lambda: answered(app))
        asked = [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "user"]
        assert (forgotten, answers(app), asked) == ([], ["Again."], ["Once more?"])


async def test_a_model_error_is_shown_in_the_conversation_and_the_app_goes_on(open_client, model):
    model.play()  # no steps: the scripted server answers HTTP 500
    async with open_client("wiki") as client, running(client) as (app, pilot):
        await submit(app, pilot, "Bees?")
        await until(pilot, lambda: shown(app, "error"))
        error = shown(app, "error")[0]
        model.play(answer("Bees dance."))
        await submit(app, pilot, "Bees again?")
        await until(pilot, lambda: answered(app))
        assert (error.startswith("Error: "), "HTTP 500" in error, "(qa.model.base_url)" in error, answers(app)) == (
            True, True, True, ["Bees dance."]
        )


async def test_the_document_filter_picks_documents_across_databases_and_questions_read_only_them(
    open_client, model, qa_databases
):
    from textual.widgets import Input, SelectionList

    model.play(call("search", query="bees vaccines volcano plants", limit=10), answer("Lava and vaccines."))
    async with open_client("papers", "wiki") as client, running(client) as (app, pilot):
        await pilot.press("ctrl+f")
        await until(pilot, lambda: app.screen.id == "filter")
        documents = app.screen.query_one("#documents", SelectionList)
        def listed() -> list[str]:
            return [str(documents.get_option_at_index(i).prompt) for i in range(documents.option_count)]

        every = listed()
        for narrow, left in (("volc", ["wiki: Volcanoes"]), ("vacc", ["papers: Vaccines"])):
            app.screen.query_one("#narrow", Input).value = narrow
            await until(pilot, lambda: listed() == left)  # noqa: B023
            documents.select_all()
            await pilot.pause()
        await pilot.click("#apply")
        await until(pilot, lambda: app.screen.id != "filter")
        status = str(app.query_one("#filter-status").content)
        await submit(app, pilot, "Anything?")
        await until(pilot, lambda: answered(app))
    shown_to_model = chunk_ids_in(last_tool_result(model.requests[1]))
    assert (sorted(every), status, sorted(shown_to_model)) == (
        ["papers: Photosynthesis", "papers: Protein folding", "papers: Vaccines", "wiki: Honey bees", "wiki: Volcanoes"],
        "Filter: papers: Vaccines, wiki: Volcanoes",
        sorted([qa_databases.chunk("papers", "Vaccines"), qa_databases.chunk("wiki", "Volcanoes")]),
    )


async def test_slash_sources_in_the_prompt_narrows_later_questions_and_an_uncited_answer_says_so(open_client, model, qa_databases):
    model.play(call("search", query="bees vaccines", limit=5), answer("Bees."))
    async with open_client("papers", "wiki") as client, running(client) as (app, pilot):
        await submit(app, pilot, "/sources wiki")
        await submit(app, pilot, "Bees and vaccines?")
        await until(pilot, lambda: answered(app))
        notes = shown(app, "note")
    wiki_chunks = {ids[0] for ids in qa_databases.chunks["wiki"].values()}
    assert (notes, set(chunk_ids_in(last_tool_result(model.requests[1])))) == (
        ["Sources: wiki.", "Not grounded: the model searched the documents but cited none of them."],
        wiki_chunks,
    )


async def _run_from_palette(app, pilot, command: str) -> None:
    await pilot.press("ctrl+p")
    await until(pilot, lambda: app.screen.__class__.__name__ == "CommandPalette")
    await pilot.press(*command)
    await pilot.pause(0.3)
    await pilot.press("enter")


async def test_the_palette_shows_each_database_info(open_client, model):
    async with open_client("papers", "wiki") as client, running(client) as (app, pilot):
        await _run_from_palette(app, pilot, "Database info")
        await until(pilot, lambda: app.screen.id == "info")
        text = dialog_text(app)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen.id != "info")
    assert ("papers" in text, "documents: 3, chunks: 4" in text, "wiki" in text, "documents: 2, chunks: 2" in text) == (
        True, True, True, True
    )


async def test_the_palette_shows_the_grounding_of_the_highlighted_citation(open_client, model, qa_databases):
    model.play(call("cite", chunk_ids=[qa_databases.chunk("wiki", "Honey bees")]), answer("Bees dance."))
    async with open_client("papers", "wiki") as client, running(client) as (app, pilot):
        await submit(app, pilot, "Bees?")
        await until(pilot, lambda: citation_lines(app))
        await _run_from_palette(app, pilot, "Show the grounding")
        await until(pilot, lambda: app.screen.id == "grounding")
        lines = dialog_text(app).splitlines()
        title = app.screen.title_text
    chunk_id = qa_databases.chunk("wiki", "Honey bees")
    assert (lines[0], "section: Honey bees" in lines, lines[-1], title) == (
        "[1] wiki: Honey bees",
        True,
        "Honey bees tell their hive mates where flowers are with the waggle dance.",
        f"Grounding: the cited text and its pages (`haiku-rag visualize {chunk_id}` draws a PDF chunk on its page)",
    )


async def test_clearing_the_conversation_forgets_questions_and_citations_and_restarts_the_index(
    open_client, model, qa_databases
):
    bees = qa_databases.chunk("wiki", "Honey bees")
    model.play(call("cite", chunk_ids=[bees]), answer("Bees dance."),
               call("cite", chunk_ids=[qa_databases.chunk("wiki", "Volcanoes")]), answer("Lava."))
    async with open_client("wiki") as client, running(client) as (app, pilot):
        await submit(app, pilot, "Bees?")
        await until(pilot, lambda: answered(app))
        await pilot.press("ctrl+l")
        await pilot.pause()
        cleared = (answers(app), citation_lines(app), list(app.session.state.messages))
        await submit(app, pilot, "Volcanoes?")
        await until(pilot, lambda: answered(app))
        asked = [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "user"]
        assert (cleared, citation_lines(app), asked) == (([], [], []), ["[1] Volcanoes"], ["Volcanoes?"])


async def test_slash_quit_closes_the_app(open_client, model):
    async with open_client("wiki") as client, running(client) as (app, pilot):
        await submit(app, pilot, "/quit")
        await asyncio.sleep(0)
        await until(pilot, lambda: not app.is_running, timeout=10)


def _read_until(fd: int, wanted: bytes, timeout: float) -> bytes:
    import os
    import select

    seen = b""
    deadline = time.monotonic() + timeout
    while wanted not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                seen += os.read(fd, 65536)
            except OSError:  # the terminal closed: the process is gone
                break
    return seen


def test_haiku_rag_chat_on_a_terminal_opens_the_app_and_ctrl_q_leaves_it(tmp_path, qa_databases, model):
    import fcntl
    import os
    import pty
    import struct
    import subprocess
    import termios

    from qa_cli_support import CLI, write_qa_config

    from support import cli_env

    config = write_qa_config(tmp_path / "haiku.rag.yaml", {"wiki": qa_databases.locations["wiki"]},
                             model.base_url, tmp_path / "data")
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    process = subprocess.Popen([*CLI, "--config", str(config), "chat"], stdin=follower, stdout=follower,
                               stderr=follower, env=cli_env(TERM="xterm-256color"), cwd="/", close_fds=True)
    os.close(follower)
    try:
        screen = _read_until(leader, b"Citations", timeout=120)
        # ctrl+q, again until it lands: the terminal eats it as XON until the app has set raw mode.
        for _ in range(60):
            os.write(leader, b"\x11")
            _read_until(leader, b"\x1b[?1049l", timeout=1)  # the app leaving the alternate screen
            if process.poll() is not None:
                break
        code = process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
        os.close(leader)
    assert (b"Citations" in screen, code) == (True, 0), screen[-2000:]
