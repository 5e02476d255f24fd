"""run-batch's progress bar on a terminal says why it waits before the first file is done."""

from __future__ import annotations

import io

from rich.console import Console

from haiku.ingester.runner import Progress


def test_the_bar_says_it_is_loading_until_the_first_file_is_done():
    screen = io.StringIO()
    bar = Progress(True, Console(file=screen, force_terminal=True, width=120))
    bar.start(3)
    try:
        bar._bar.refresh()
        waiting = screen.getvalue()
        bar.advance(lambda: 2)
        bar._bar.refresh()
        working = screen.getvalue()[len(waiting):]
    finally:
        bar.stop()
    assert "loading the embedding model" in waiting and "0/3" in waiting
    assert "ingesting" in working and "loading" not in working and "1/3" in working


def test_a_log_line_written_while_the_bar_shows_is_printed_above_it_not_over_it(monkeypatch):
    import sys

    from haiku.ingester.logs import configure_logging, get_logger

    terminal = io.StringIO()  # the stderr logging was configured with
    monkeypatch.setattr(sys, "stderr", terminal)
    configure_logging("json")
    screen = io.StringIO()
    bar = Progress(True, Console(file=screen, force_terminal=True, width=120))
    bar.start(3)
    try:
        get_logger().warning("a line while the bar shows", file="x.md")
    finally:
        bar.stop()
    assert "a line while the bar shows" not in terminal.getvalue()  # not written past the bar's console
    assert "a line while the bar shows" in screen.getvalue()  # printed by the bar's console, above the bar
