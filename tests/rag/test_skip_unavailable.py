"""``search.on_unavailable: skip``: one broken database no longer fails a federated search (docs/configuration.md).

The default stays ``fail``, naming the database. With ``skip`` the others answer,
and the CLI (stderr and ``--json``), the client (``SearchResults.skipped``) and
the MCP search tool say which databases were skipped and why.
"""

from __future__ import annotations

import json

import pytest
from rag_support import build_config, config_data
from rag_support import invoke as cli

from haiku.core.errors import SourceUnavailableError
from haiku.rag.client import HaikuRAG
from support import copy_database, write_config


def _damaged_wiki(built, tmp_path):
    path = copy_database(built["wiki"], tmp_path / "wiki.lancedb")
    for file in (path / "chunks.lance" / "data").glob("*.lance"):
        file.unlink()
    return path


@pytest.fixture
def broken_set(built, tmp_path):
    """papers, a damaged wiki (reads fail) and ghost (missing: the open fails), in that order."""
    return {"papers": built["papers"], "wiki": _damaged_wiki(built, tmp_path), "ghost": tmp_path / "ghost.lancedb"}


async def test_by_default_a_broken_database_fails_the_search_naming_it(broken_set, tmp_path):
    config = build_config(tmp_path / "data", {"papers": broken_set["papers"], "wiki": broken_set["wiki"]})
    async with HaikuRAG(config=config, read_only=True) as client:
        with pytest.raises(SourceUnavailableError, match=r"^database 'wiki' could not be read"):
            await client.search("pasta", search_type="fts")


async def test_skip_answers_from_the_others_and_names_the_skipped_with_why(broken_set, tmp_path):
    config = build_config(tmp_path / "data", broken_set, search={"on_unavailable": "skip"})
    async with HaikuRAG(config=config, read_only=True) as client:
        results = await client.search("pasta water", search_type="hybrid")
    assert results and {r.source for r in results} == {"papers"}
    assert set(results.skipped) == {"wiki", "ghost"}
    assert "could not be read" in results.skipped["wiki"] and "does not exist" in results.skipped["ghost"]


def test_the_cli_says_on_stderr_and_in_json_which_databases_were_skipped(broken_set, tmp_path):
    data = config_data(tmp_path / "data", broken_set, search={"on_unavailable": "skip"})
    config = write_config(tmp_path / "c.yaml", data)
    result = cli("search", "--json", "pasta water", config=config)
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert {r["source"] for r in payload["results"]} == {"papers"}
    assert sorted(s["database"] for s in payload["skipped"]) == ["ghost", "wiki"]
    # Each skipped database is named once, by the reason itself.
    warnings = sorted(line for line in result.stderr.splitlines() if line.startswith("Warning:"))
    assert [(w.split(":", 2)[:2], w.count("'ghost'") + w.count("'wiki'")) for w in warnings] == [
        (["Warning", " skipped"], 1),
        (["Warning", " skipped"], 1),
    ], result.stderr
    assert "Warning: skipped: database 'wiki' could not be read" in result.stderr


async def test_the_mcp_search_tool_names_the_skipped_collections(broken_set, tmp_path):
    from mcp import Client

    from haiku.rag.mcp import create_mcp_server

    config = build_config(tmp_path / "data", broken_set, search={"on_unavailable": "skip"})
    async with Client(create_mcp_server(config=config)) as client:
        result = await client.call_tool("search_documents", {"query": "pasta water"})
    text = "\n".join(part.text for part in result.content if hasattr(part, "text"))
    assert "Skipped: database 'wiki' could not be read" in text
    assert "Skipped: database 'ghost'" in text and "Collection: papers" in text
    assert text.count("'wiki'") == 1 and text.count("'ghost'") == 1  # each named once
