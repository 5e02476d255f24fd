"""The MCP server, spoken to by the MCP SDK's own client over real transports (docs/mcp.md).

One `haiku-rag mcp --stdio` subprocess serves every stdio call (recorded once
per module, asserted one per test); one `haiku-rag mcp` HTTP subprocess serves
the streamable-HTTP check.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import time
from typing import Any

import pytest
from qa_cli_support import CLI, write_qa_config

from support import cli_env

PAPERS_QUERY = "chlorophyll vaccines protein"


def _text(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


@pytest.fixture(scope="module")
async def stdio_calls(qa_databases, scripted_model, tmp_path_factory) -> dict[str, Any]:
    from mcp import Client, StdioServerParameters

    tmp = tmp_path_factory.mktemp("mcp-stdio")
    config = write_qa_config(
        tmp / "haiku.rag.yaml",
        {"papers": qa_databases.locations["papers"], "wiki": qa_databases.locations["wiki"]},
        scripted_model.base_url,
        tmp / "data",
    )
    params = StdioServerParameters(
        command=CLI[0], args=[*CLI[1:], "--config", str(config), "mcp", "--stdio"], env=cli_env(), cwd="/"
    )
    papers_doc = qa_databases.doc("papers", "Photosynthesis")
    wiki_doc = qa_databases.doc("wiki", "Honey bees")
    calls = {
        "search_papers": ("search_documents", {"query": PAPERS_QUERY, "limit": 10, "sources": ["papers"]}),
        "search_unknown": ("search_documents", {"query": "bees", "sources": ["nope"]}),
        "search_none": ("search_documents", {"query": "bees", "sources": []}),
        "search_huge_limit": ("search_documents", {"query": "bees", "limit": 100_000_000}),
        "list_huge_limit": ("list_documents", {"limit": 10**12}),
        "get_papers_doc_from_wiki": ("get_document", {"document_id": papers_doc, "source": "wiki"}),
        "get_wiki_doc_from_wiki": ("get_document", {"document_id": wiki_doc, "source": "wiki"}),
        "list": ("list_documents", {}),
        "outline": ("get_document_outline", {"document_id": papers_doc}),
        "section": ("get_document_section", {"document_id": papers_doc, "section_id": "2", "source": "papers"}),
        "missing_section": ("get_document_section", {"document_id": papers_doc, "section_id": "99"}),
        "code_wiki": ("execute_code", {"code": "sorted(d['title'] for d in list_documents())", "sources": ["wiki"]}),
    }
    recorded: dict[str, Any] = {}
    async with Client(params, read_timeout_seconds=120) as client:
        recorded["instructions"] = client.instructions
        recorded["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
        for key, (name, arguments) in calls.items():
            recorded[key] = await client.call_tool(name, arguments)
        # Last: code flooding the channel back to haiku, with the server's peak memory around it.
        [server] = _mcp_server_pids()
        recorded["peak_before_flood"] = _peak_rss(server)
        recorded["code_flood"] = await client.call_tool("execute_code", {"code": CHANNEL_FLOOD})
        recorded["peak_after_flood"] = _peak_rss(server)
    return recorded


# Writes control messages of 1 MB to every descriptor it holds, forever (docs/sandbox.md, "Bounds").
CHANNEL_FLOOD = (
    "import os, json\n"
    "line = (json.dumps({'op': 'out', 'text': 'x' * 1_000_000}) + '\\n').encode()\n"
    "while True:\n"
    "    for fd in range(3, 64):\n"
    "        try:\n"
    "            os.write(fd, line)\n"
    "        except OSError:\n"
    "            pass\n"
)


def _mcp_server_pids() -> list[int]:
    """The `haiku-rag mcp --stdio` processes this test process started."""
    from pathlib import Path

    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            parent = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        if parent == os.getpid() and b"mcp" in argv and b"--stdio" in argv:
            found.append(int(proc.name))
    return found


def _peak_rss(pid: int) -> int:
    from pathlib import Path

    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmHWM for pid {pid}")


def test_mcp_offers_the_eight_read_only_tools(stdio_calls):
    assert stdio_calls["tools"] == [
        "execute_code",
        "get_document",
        "get_document_outline",
        "get_document_section",
        "get_result_pictures",
        "list_documents",
        "search_documents",
        "search_documents_by_image",
    ]


def test_mcp_instructions_name_the_collections(stdio_calls):
    assert "Collections: papers, wiki." in (stdio_calls["instructions"] or "")


def test_mcp_search_with_sources_returns_only_those_databases_results(stdio_calls):
    text = _text(stdio_calls["search_papers"])
    collections = [line.split(": ", 1)[1] for line in text.splitlines() if line.startswith("Collection: ")]
    chunk_lines = [line for line in text.splitlines() if line.startswith("Chunk ID: ")]
    assert (set(collections), len(collections)) == ({"papers"}, len(chunk_lines))


def test_mcp_search_with_an_unknown_source_is_a_tool_error_naming_it(stdio_calls):
    result = stdio_calls["search_unknown"]
    assert (result.is_error, "unknown database(s) nope" in _text(result)) == (True, True)


def test_mcp_limits_above_search_max_limit_are_tool_errors_naming_the_bound(stdio_calls):
    errors = [stdio_calls[key] for key in ("search_huge_limit", "list_huge_limit")]
    assert [(e.is_error, "(search.max_limit)" in _text(e)) for e in errors] == [(True, True), (True, True)], [
        _text(e) for e in errors
    ]


def test_mcp_search_with_empty_sources_finds_nothing(stdio_calls):
    assert _text(stdio_calls["search_none"]) == "No results found."


def test_mcp_get_document_with_source_asks_only_that_database(stdio_calls):
    result = stdio_calls["get_papers_doc_from_wiki"]
    assert (result.is_error, "No document with id" in _text(result)) == (True, True)


def test_mcp_get_document_returns_the_document_with_its_source(stdio_calls):
    document = json.loads(_text(stdio_calls["get_wiki_doc_from_wiki"]))
    assert (document["title"], document["source"]) == ("Honey bees", "wiki")


def test_mcp_list_documents_names_each_source(stdio_calls):
    listed = json.loads(_text(stdio_calls["list"]))["documents"]
    assert [d["source"] for d in listed] == ["papers", "wiki", "papers", "wiki", "papers"]


def test_mcp_outline_lists_the_headings_with_section_ids(stdio_calls):
    outline = json.loads(_text(stdio_calls["outline"]))
    assert [(s["section_id"], s["heading"]) for s in outline["sections"]] == [
        ("1", "Photosynthesis"),
        ("2", "Light reactions"),
    ]


def test_mcp_section_returns_the_chunks_under_that_heading(stdio_calls):
    assert "thylakoid membranes" in _text(stdio_calls["section"])


def test_mcp_missing_section_is_a_tool_error(stdio_calls):
    result = stdio_calls["missing_section"]
    assert (result.is_error, "No section 99" in _text(result)) == (True, True)


def test_mcp_execute_code_runs_over_the_selected_sources(stdio_calls):
    assert _text(stdio_calls["code_wiki"]) == repr(["Honey bees", "Volcanoes"])


def test_mcp_execute_code_flooding_the_channel_is_stopped_and_the_server_stays_small(stdio_calls):
    grown = stdio_calls["peak_after_flood"] - stdio_calls["peak_before_flood"]
    assert grown < 100 * 1024**2, f"the MCP server's peak memory grew by {grown / 1024**2:.0f} MB"
    assert "Error: the code was stopped: it sent more than" in _text(stdio_calls["code_flood"])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve_mcp_over_http(config, port: int, *options: str) -> subprocess.Popen:
    """`haiku-rag mcp` over HTTP on ``port`` as a real process (stderr kept for the test to read)."""
    return subprocess.Popen(
        [*CLI, "--config", str(config), "mcp", *options, "--port", str(port)],
        env=cli_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd="/",
    )


async def _wait_listening(port: int, process: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"haiku-rag mcp exited early: {process.stderr.read() if process.stderr else ''}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            await asyncio.sleep(0.2)
    raise AssertionError("haiku-rag mcp did not start listening")


async def test_mcp_over_streamable_http_on_127_0_0_1_lists_documents(qa_databases, scripted_model, tmp_path):
    from mcp import Client

    config = write_qa_config(
        tmp_path / "haiku.rag.yaml", {"wiki": qa_databases.locations["wiki"]}, scripted_model.base_url, tmp_path / "d"
    )
    port = _free_port()
    process = _serve_mcp_over_http(config, port)
    try:
        await _wait_listening(port, process)
        async with Client(f"http://127.0.0.1:{port}/mcp", read_timeout_seconds=60) as client:
            result = await client.call_tool("list_documents", {})
    finally:
        process.terminate()
        process.wait(timeout=20)
    titles = sorted(d["title"] for d in json.loads(_text(result))["documents"])
    assert titles == ["Honey bees", "Volcanoes"]


async def test_mcp_on_a_non_loopback_host_warns_on_stderr_that_it_serves_unauthenticated(
    qa_databases, scripted_model, tmp_path
):
    config = write_qa_config(
        tmp_path / "haiku.rag.yaml", {"wiki": qa_databases.locations["wiki"]}, scripted_model.base_url, tmp_path / "d"
    )
    port = _free_port()
    process = _serve_mcp_over_http(config, port, "--host", "0.0.0.0")
    try:
        await _wait_listening(port, process)
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=20)
    assert "Warning: --host 0.0.0.0 is not a loopback address" in stderr, stderr
    assert "no authentication" in stderr


def test_only_loopback_hosts_serve_mcp_without_a_warning():
    from haiku.rag.mcp import exposure_warning

    assert [exposure_warning(h) for h in ("127.0.0.1", "localhost", "::1")] == [None, None, None]
    assert all(exposure_warning(h) for h in ("0.0.0.0", "::", "192.0.2.7"))


def test_mcp_over_a_missing_database_fails_at_start_naming_it(qa_databases, scripted_model, tmp_path):
    from qa_cli_support import run_cli

    config = write_qa_config(
        tmp_path / "haiku.rag.yaml", {"ghost": tmp_path / "ghost.lancedb"}, scripted_model.base_url, tmp_path / "d"
    )
    done = run_cli("--config", str(config), "mcp", "--stdio", stdin="")
    assert (done.returncode, done.stderr.startswith("Error:"), "ghost" in done.stderr) == (1, True, True), done.stderr


async def test_create_mcp_server_opens_its_own_client_while_it_runs(qa_config):
    from mcp import Client

    from haiku.rag.mcp import create_mcp_server

    server = create_mcp_server(config=qa_config("papers", "wiki"))
    async with Client(server) as client:
        result = await client.call_tool("list_documents", {"sources": ["wiki"], "limit": 1})
    assert [d["source"] for d in json.loads(_text(result))["documents"]] == ["wiki"]
