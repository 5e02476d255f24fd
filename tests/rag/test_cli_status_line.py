"""`haiku-rag` says why it waits, on a terminal only, never with --json (haiku.rag.cli._status)."""

from __future__ import annotations

import io

from haiku.core.progress import set_status_reporter, status
from haiku.rag.cli._status import TerminalStatus, show_waits


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_wait_is_shown_on_one_line_and_erased_when_it_ends():
    terminal = _Terminal()
    set_status_reporter(TerminalStatus(terminal))
    try:
        with status("loading embedding model…"):
            assert terminal.getvalue().endswith("loading embedding model…")
        assert terminal.getvalue().endswith("\r\033[2K")
    finally:
        set_status_reporter(None)


def test_overlapping_waits_show_the_newest_still_running():
    shown: list[str | None] = []
    set_status_reporter(shown.append)
    try:
        with status("opening 5 databases…"):
            with status("loading embedding model…"):
                pass
    finally:
        set_status_reporter(None)
    assert shown == ["opening 5 databases…", "loading embedding model…", "opening 5 databases…", None]


def test_no_status_line_off_a_terminal_or_with_json():
    try:
        assert show_waits(["search", "q"], io.StringIO()) is False
        assert show_waits(["search", "q", "--json"], _Terminal()) is False
        assert show_waits(["search", "q"], _Terminal()) is True
    finally:
        set_status_reporter(None)


def test_nothing_is_reported_without_a_front_end(capfd):
    set_status_reporter(None)
    ran = []
    with status("loading embedding model…"):
        ran.append(True)
    assert ran == [True]
    assert capfd.readouterr() == ("", "")  # neither stdout nor stderr of the process written
    shown: list[str | None] = []
    set_status_reporter(shown.append)
    try:
        with status("opening 2 databases…"):
            pass
    finally:
        set_status_reporter(None)
    assert shown == ["opening 2 databases…", None]  # the unreported wait left nothing behind
