"""A conversion worker's output is one log event per file, naming the file (docs/ingester.md, "Logs")."""

from __future__ import annotations

import asyncio

from structlog.testing import capture_logs

from haiku.ingester.logs import get_logger
from haiku.ingester.pipeline.worker_output import GRACE_S, WorkerOutput

TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "backend.py", line 12, in convert',
    "ValueError: a table without rows",
]


def _events(logs: list[dict]) -> list[dict]:
    return [e for e in logs if e["event"] == "conversion worker output"]


async def test_a_traceback_printed_while_converting_one_file_is_one_event_naming_the_file():
    with capture_logs() as logs:
        output = WorkerOutput(get_logger(), worker_pid=7)
        output.begin("/docs/report.pdf")
        for line in TRACEBACK:
            output.line(line)
        output.end()
        await asyncio.sleep(GRACE_S * 2)
    [event] = _events(logs)
    assert (event["file"], event["lines"], event["output"]) == ("/docs/report.pdf", 3, "\n".join(TRACEBACK))


async def test_lines_that_arrive_just_after_the_reply_belong_to_the_file_just_converted():
    with capture_logs() as logs:
        output = WorkerOutput(get_logger(), worker_pid=7)
        output.begin("/docs/a.pdf")
        output.line("first")
        output.end()
        output.line("late, but written before the reply")
        await asyncio.sleep(GRACE_S * 2)
    assert [(e["file"], e["lines"]) for e in _events(logs)] == [("/docs/a.pdf", 2)]


async def test_the_next_file_starting_logs_the_previous_files_lines_at_once_under_its_name():
    with capture_logs() as logs:
        output = WorkerOutput(get_logger(), worker_pid=7)
        output.begin("/docs/a.pdf")
        output.line("about a")
        output.end()
        output.begin("/docs/b.pdf")
        output.line("about b")
        output.end()
        await asyncio.sleep(GRACE_S * 2)
    assert [(e["file"], e["output"]) for e in _events(logs)] == [("/docs/a.pdf", "about a"), ("/docs/b.pdf", "about b")]
