"""`haiku-rag ask` and `haiku-rag chat`, run as real subprocesses (SPEC §13.3-§13.5)."""

from __future__ import annotations

import socket

import pytest
from qa_cli_support import run_cli, write_config
from qa_scripted_model import answer, call


@pytest.fixture
def config_file(tmp_path, qa_databases, scripted_model):
    def build(*names: str, model_url: str | None = None):
        return write_config(
            tmp_path / "haiku.rag.yaml",
            {n: qa_databases.locations[n] for n in names},
            model_url or scripted_model.base_url,
            tmp_path / "data",
        )

    return build


def test_ask_prints_the_question_the_answer_and_citations_labelled_with_their_database(
    config_file, model, qa_databases
):
    model.play(call("cite", chunk_ids=[qa_databases.chunk("wiki", "Honey bees")]), answer("Bees dance."))
    done = run_cli("--config", str(config_file("papers", "wiki")), "ask", "What do bees do?")
    assert (done.returncode, done.stdout.splitlines()[:3], "[1] wiki: Honey bees" in done.stdout) == (
        0,
        ["Question: What do bees do?", "", "Bees dance."],
        True,
    ), done.stderr


def test_ask_over_one_selected_database_labels_no_citation(config_file, model, qa_databases):
    model.play(call("cite", chunk_ids=[qa_databases.chunk("wiki", "Honey bees")]), answer("Bees dance."))
    done = run_cli("--config", str(config_file("papers", "wiki")), "--db-name", "wiki", "ask", "Bees?")
    assert "[1] Honey bees" in done.stdout, done.stderr


def test_ask_full_citations_prints_the_whole_chunk(config_file, model, qa_databases):
    model.play(call("cite", chunk_ids=[qa_databases.chunk("wiki", "Honey bees")]), answer("Bees dance."))
    done = run_cli("--config", str(config_file("wiki")), "ask", "Bees?", "--full-citations")
    assert "Honey bees tell their hive mates where flowers are with the waggle dance." in done.stdout, done.stderr


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


def test_chat_applies_commands_and_exits_0_at_end_of_input(config_file, model):
    done = run_cli("--config", str(config_file("papers", "wiki")), "chat", stdin="/sources wiki\n/filter\n")
    assert (done.returncode, "Sources: wiki." in done.stdout, "Filter cleared" in done.stdout) == (0, True, True)


def test_chat_answers_each_line_until_slash_quit(config_file, model, qa_databases):
    model.play(answer("Bees dance."), answer("Should not be asked."))
    done = run_cli("--config", str(config_file("wiki")), "chat", stdin="Bees?\n/quit\nAgain?\n")
    assert (done.returncode, "Bees dance." in done.stdout, model.remaining) == (0, True, 1), done.stderr
