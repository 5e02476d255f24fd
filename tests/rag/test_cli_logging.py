"""`haiku-rag --log-level`, `--log-format` and `-q`, as haiku-ingester takes them (docs/cli.md#global-options)."""

from __future__ import annotations

import json

from rag_support import cli_all


def _events(stderr: str) -> list[dict]:
    return [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]


def test_log_level_and_format_show_the_library_events_as_json_lines_on_stderr(tmp_path):
    (shown,) = cli_all((("init", "--db", str(tmp_path / "notes.lancedb"), "--log-level", "info", "--log-format", "json"), {}))
    created = [e for e in _events(shown.stderr) if e.get("event") == "store.created"]
    assert (shown.returncode, len(created), created[0]["level"] if created else None, shown.stdout.startswith("Database initialized")) == (
        0, 1, "info", True
    ), shown.stderr


def test_by_default_and_with_q_an_info_event_is_not_shown(tmp_path):
    default, quiet = cli_all(
        (("init", "--db", str(tmp_path / "a.lancedb")), {}),
        (("-q", "--log-level", "info", "init", "--db", str(tmp_path / "b.lancedb")), {}),
    )
    assert [(done.returncode, "store.created" in done.stderr) for done in (default, quiet)] == [(0, False), (0, False)], (
        default.stderr + quiet.stderr
    )
