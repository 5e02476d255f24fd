"""`haiku-rag ask` and `haiku-rag chat`, run as real subprocesses (docs/cli.md)."""

from __future__ import annotations

import socket

import pytest
from qa_cli_support import invoke as run_cli
from qa_cli_support import write_qa_config
from qa_scripted_model import answer, call

WHOLE_CHUNK = "Honey bees tell their hive mates where flowers are with the waggle dance."


@pytest.fixture
def config_file(tmp_path, qa_databases, scripted_model):
    def build(*names: str, model_url: str | None = None):
        return write_qa_config(
            tmp_path / "haiku.rag.yaml",
            {n: qa_databases.locations[n] for n in names},
            model_url or scripted_model.base_url,
            tmp_path / "data",
        )

    return build


def test_ask_prints_the_question_the_answer_and_full_citations_labelled_with_their_database(
    config_file, model, qa_databases
):
    model.play(call("cite", chunk_ids=[qa_databases.chunk("wiki", "Honey bees")]), answer("Bees dance."))
    done = run_cli("--config", str(config_file("papers", "wiki")), "ask", "What do bees do?", "--full-citations")
    lines = done.stdout.splitlines()
    assert (done.returncode, lines[:3], "[1] wiki: Honey bees" in lines, WHOLE_CHUNK in done.stdout) == (
        0,
        ["Question: What do bees do?", "", "Bees dance."],
        True,
        True,
    ), done.stderr


def test_ask_over_one_selected_database_labels_no_citation(config_file, model, qa_databases):
    model.play(call("cite", chunk_ids=[qa_databases.chunk("wiki", "Honey bees")]), answer("Bees dance."))
    done = run_cli("--config", str(config_file("papers", "wiki")), "--db-name", "wiki", "ask", "Bees?")
    assert "[1] Honey bees" in done.stdout.splitlines(), done.stderr


def test_ask_require_grounded_exits_1_on_an_answer_that_cites_nothing_and_0_on_a_cited_one(
    config_file, model, qa_databases
):
    config = str(config_file("wiki"))
    model.play(answer("Bees dance, I think."))
    ungrounded = run_cli("--config", config, "ask", "What do bees do?", "--require-grounded")
    model.play(call("cite", chunk_ids=[qa_databases.chunk("wiki", "Honey bees")]), answer("Bees dance."))
    grounded = run_cli("--config", config, "ask", "What do bees do?", "--require-grounded")
    assert (
        ungrounded.returncode,
        "Bees dance, I think." in ungrounded.stdout,
        ungrounded.stderr.strip(),
        grounded.returncode,
    ) == (
        1,
        True,
        "Error: --require-grounded: the answer is not grounded: "
        "the model answered without searching the documents or citing them",
        0,
    ), ungrounded.stderr + grounded.stderr


def test_ask_with_an_unreachable_model_exits_1_naming_qa_model_base_url(config_file):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    done = run_cli("--config", str(config_file("wiki", model_url=url)), "ask", "Bees?")
    assert (done.returncode, done.stderr.startswith("Error:"), f"{url} (qa.model.base_url)" in done.stderr) == (
        1,
        True,
        True,
    ), done.stderr


def test_chat_applies_each_line_until_slash_quit_and_exits_0(config_file, model):
    model.play(answer("Bees dance."), answer("Should not be asked."))
    stdin = "/sources wiki\n/filter\nBees?\n/quit\nAgain?\n"
    done = run_cli("--config", str(config_file("papers", "wiki")), "chat", stdin=stdin)
    printed = [line for line in done.stdout.splitlines() if line]
    assert (done.returncode, printed[:3], model.remaining) == (
        0,
        ["Sources: wiki.", "Filter cleared: every document.", "Bees dance."],
        1,
    ), done.stderr
