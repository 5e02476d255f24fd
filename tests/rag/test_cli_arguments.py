"""Global options may follow the command, as haiku-ingester's --db-name does."""

from __future__ import annotations

import pytest

from haiku.rag.cli._arguments import hoist_global_options


@pytest.mark.parametrize(
    ("given", "parsed"),
    [
        (["search", "bread", "--db-name", "cooking"], ["--db-name", "cooking", "search", "bread"]),
        (["-c", "x.yaml", "list", "--json", "--read-only"], ["-c", "x.yaml", "--read-only", "list", "--json"]),
        (["tag", "create", "r1", "--database=papers"], ["--database=papers", "tag", "create", "r1"]),
        (["--db-name", "a", "search", "q"], ["--db-name", "a", "search", "q"]),
        (["search", "--", "--db-name"], ["search", "--", "--db-name"]),
        (["list", "--db-name"], ["--db-name", "list"]),
        (["--help"], ["--help"]),
    ],
    ids=["value-after", "config-and-flag", "equals-form", "already-before", "after-double-dash", "missing-value", "no-command"],
)
def test_global_options_after_the_command_move_before_it(given, parsed):
    assert hoist_global_options(given) == parsed
