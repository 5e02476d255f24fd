"""`haiku-rag inspect` as a real process: in a terminal, without one, and with a bad selection."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest
from inspector_support import Terminal
from rag_support import HAIKU_RAG, cli, config_data

from support import write_config


@pytest.fixture
def two_db_file(built, tmp_path):
    return write_config(
        tmp_path / "haiku.rag.yaml",
        config_data(tmp_path / "data", {"papers": str(built["papers"]), "wiki": str(built["wiki"])}),
    )


def test_inspect_in_a_terminal_shows_the_documents_and_q_quits_restoring_the_terminal(two_db_file):
    terminal = Terminal([str(HAIKU_RAG), "--config", str(two_db_file), "inspect"])
    try:
        terminal.read_until("Photosynthesis")
        terminal.type("q")
        assert terminal.wait() == 0
        assert terminal.output.rstrip().count(b"\x1b[?1049l") >= 1  # the alternate screen is left
    finally:
        terminal.close()


def test_after_a_suspension_the_inspector_takes_keys_again(two_db_file):
    # Quitting does not wait for the input thread; coming back from Ctrl+Z must still start a live one.
    terminal = Terminal([str(HAIKU_RAG), "--config", str(two_db_file), "inspect"])
    try:
        terminal.read_until("Photosynthesis")
        terminal.process.send_signal(signal.SIGTSTP)
        _wait_until_stopped(terminal.process.pid)
        terminal.process.send_signal(signal.SIGCONT)
        terminal.type("?")
        terminal.read_until("Panes (Tab", seconds=60)  # the keys dialog: input is read again
        terminal.type("\x1b")
        time.sleep(0.5)  # an Escape followed at once by q reads as Alt+q
        terminal.type("q")
        assert terminal.wait() == 0
    finally:
        terminal.close()


def _wait_until_stopped(pid: int, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "T":
        assert time.monotonic() < deadline, "the inspector never stopped on SIGTSTP"
        time.sleep(0.02)


def test_exit_after_first_screen_stops_once_the_first_databases_documents_are_painted(two_db_file):
    terminal = Terminal([str(HAIKU_RAG), "--config", str(two_db_file), "inspect", "--exit-after-first-screen"])
    try:
        assert terminal.wait(120) == 0
        assert "Volcanoes" in terminal.read_until("Photosynthesis", seconds=1)
    finally:
        terminal.close()


def test_inspect_without_a_terminal_says_it_needs_one(two_db_file):
    done = cli("inspect", config=two_db_file)
    assert (done.returncode, done.stderr.strip()) == (
        1, "Error: haiku-rag inspect needs a terminal (or --serve, to use a web browser)"
    )


def test_inspect_at_a_tag_over_several_databases_is_refused_before_anything_opens(two_db_file):
    done = cli("inspect", "--at", "r1", config=two_db_file)
    assert (done.returncode, done.stderr.strip()) == (
        1, "Error: lancedb.databases names papers, wiki; --at reads a single database: pass --db-name NAME, or --db PATH"
    )
