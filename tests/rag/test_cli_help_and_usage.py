"""What `haiku-rag` says about itself: help pages, unknown commands, locations (docs/cli.md)."""

from __future__ import annotations

import pytest
from rag_support import config_data
from rag_support import invoke as cli
from rag_support import invoke_all as cli_all

from haiku.rag.cli._unknown_commands import unknown_command_message
from support import write_config


@pytest.mark.parametrize(
    ("command", "ingester_command"),
    [("add", "haiku-ingester add - --title TITLE --db-name NAME"),
     ("add-src", "haiku-ingester add PATH|URL --db-name NAME"), ("delete", "haiku-ingester delete ID --db-name NAME"), ("rebuild", "haiku-ingester rebuild --db-name NAME"),
     ("reprocess", "haiku-ingester reprocess --db-name NAME"), ("formats", "haiku-ingester formats")],
)
def test_a_command_of_the_published_tool_that_writes_documents_names_the_ingester_command(command, ingester_command):
    result = cli(command, "x")
    said = " ".join(result.stderr.replace("│", " ").split())  # the usage box wraps the line
    assert (result.returncode, "documents are written by haiku-ingester" in said, f"`{ingester_command}`" in said) == (
        2, True, True
    ), result.stderr


def test_an_unknown_command_gets_only_close_spellings_as_suggestions():
    commands = ["search", "list", "history", "info"]
    assert [
        unknown_command_message("inspector", commands),
        unknown_command_message("inspector", [*commands, "inspect"]),
        unknown_command_message("serach", commands),
    ] == [
        "No such command 'inspector'.",
        "No such command 'inspector'. Did you mean 'inspect'?",
        "No such command 'serach'. Did you mean 'search'?",
    ]


def test_help_pages_name_the_global_options_and_the_defaults_they_fall_back_to():
    chat, tag_create, root = cli_all(
        (("chat", "--help"), {}), (("tag", "create", "--help"), {}), (("--help",), {})
    )
    flat = [" ".join(done.stdout.replace("│", " ").split()) for done in (chat, tag_create, root)]
    assert (
        "Chat model name (default: qa.model.name)." in flat[0],
        all("before or after the command: --db-name NAME" in page for page in flat[:2]),
        "then haiku.rag.yaml in the data directory" in flat[2],
    ) == (True, True, True), flat


def test_info_and_init_print_the_location_normalised(tmp_path):
    (tmp_path / "examples").mkdir()
    location = f"{tmp_path}/examples/../demo.lancedb"
    config = write_config(tmp_path / "c.yaml", config_data(tmp_path / "data", {"demo": location}))
    init = cli("init", config=config)
    info = cli("info", config=config)
    assert (init.stdout, f"path: {tmp_path}/demo.lancedb\n" in info.stdout) == (
        f"Database initialized at {tmp_path}/demo.lancedb\n", True
    ), init.stderr + info.stderr


def test_with_no_configuration_found_a_command_says_where_it_looked(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    result = cli("list", cwd=home, env={"HOME": str(home), "XDG_DATA_HOME": str(home / "share")})
    said = result.stderr
    assert (
        result.returncode,
        said.startswith(
            "Error: no configuration file was found (looked at: --config (not given); $HAIKU_RAG_CONFIG_PATH (unset); "
        ),
        f"{home}/haiku.rag.yaml" in said,
        "default database 'haiku.rag'" in said and "let haiku-ingester create this one" in said,
        said.count("\n"),
    ) == (1, True, True, True, 1), said
