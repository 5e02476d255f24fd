"""Conversion on any client and from both CLIs (docs/client.md, "Conversion"; docs/cli.md, "convert"):
what a file becomes, with nothing written and no database opened. The commands run in process
(support.run_main_in_process) but for the one that hides docling from a fresh interpreter."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from haiku.ingester.cli import main as ingester_main
from haiku.rag.cli import main as rag_main
from support import cli_env, run_main_in_process, write_config

pytestmark = pytest.mark.slow

MARKDOWN = "# Kestrel notes\n\nKestrels hover over the meadow, set a `top_n`.\n\n## Diet\n\nVoles, mostly.\n"
BIN = Path(sys.executable).parent


def _config(tmp_path: Path) -> Path:
    """Two databases that do not exist: conversion must neither need nor create them."""
    return write_config(
        tmp_path / "haiku.rag.yaml",
        {
            "storage": {"data_dir": str(tmp_path / "data")},
            "lancedb": {"databases": {"a": str(tmp_path / "a.lancedb"), "b": str(tmp_path / "b.lancedb")}},
            "processing": {"chunk_size": 64},
        },
    )


async def test_a_federated_client_converts_chunks_and_titles_a_file_writing_nothing(tmp_path):
    from haiku.core.config import load_config
    from haiku.rag.client import HaikuRAG

    config = _config(tmp_path)
    (tmp_path / "notes.md").write_text(MARKDOWN)
    client = HaikuRAG(config=load_config(config))
    assert client.covers_multiple
    document = await client.convert(tmp_path / "notes.md")
    chunks = await client.chunk(document)
    assert await client.generate_title(document) == "Kestrel notes"
    assert "set a `top_n`." in document.content
    assert [c.headings for c in chunks] == [["Kestrel notes"], ["Kestrel notes", "Diet"]]
    assert not (tmp_path / "a.lancedb").exists() and not (tmp_path / "b.lancedb").exists()


async def test_conversion_runs_off_the_event_loop(tmp_path):
    """Building the converter and reading a file take a worker thread: the loop keeps turning meanwhile."""
    from haiku.core.config import load_config
    from haiku.core.convert import AsyncFileConverter

    (tmp_path / "notes.md").write_text(MARKDOWN)
    files = AsyncFileConverter(load_config(_config(tmp_path)))
    ticks = 0
    converting = asyncio.ensure_future(files.convert(tmp_path / "notes.md"))
    while not converting.done():
        ticks += 1
        await asyncio.sleep(0.001)
    assert (await converting).content.startswith("# Kestrel notes")
    assert ticks >= 2, "the loop stood still while the file was converted"


def test_haiku_ingester_convert_prints_title_markdown_and_chunks_as_json(tmp_path):
    config = _config(tmp_path)
    (tmp_path / "notes.md").write_text(MARKDOWN)
    done = run_main_in_process(
        ingester_main,
        [str(BIN / "haiku-ingester"), "--config", str(config), "convert", str(tmp_path / "notes.md"), "--chunks", "--json"],
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["title"] == "Kestrel notes" and report["content"].startswith("# Kestrel notes")
    assert [c["headings"][-1] for c in report["chunks"]] == ["Kestrel notes", "Diet"]
    assert all(0 < c["tokens"] <= 64 for c in report["chunks"])
    assert not (tmp_path / "a.lancedb").exists()


def test_haiku_rag_convert_without_the_extra_names_it_in_one_line(tmp_path):
    (tmp_path / "notes.md").write_text(MARKDOWN)
    script = (
        "import sys\nsys.modules['docling'] = None\n"
        "sys.argv = ['haiku-rag', '--config', sys.argv[1], 'convert', sys.argv[2]]\n"
        "from haiku.rag.cli import main\nmain()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(_config(tmp_path)), str(tmp_path / "notes.md")],
        capture_output=True, text=True, timeout=240, env=cli_env(),
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "Error: converting files needs the convert extra (docling is not installed): pip install 'haiku-core[convert]'"
    ]


def test_haiku_rag_convert_refuses_an_unsupported_file_in_one_line(tmp_path):
    (tmp_path / "data.xyz").write_text("x")
    done = run_main_in_process(
        rag_main, [str(BIN / "haiku-rag"), "--config", str(_config(tmp_path)), "convert", str(tmp_path / "data.xyz")]
    )
    assert (done.returncode, done.stderr.strip()) == (
        1, f"Error: {tmp_path / 'data.xyz'}: unsupported file type .xyz; `haiku-ingester formats` lists the supported ones"
    )


def test_the_library_refuses_an_unsupported_file_in_its_own_words(tmp_path):
    from haiku.core.config import load_config
    from haiku.core.convert.files import FileConverter
    from haiku.core.errors import ConversionError

    (tmp_path / "data.xyz").write_text("x")
    with pytest.raises(ConversionError) as refused:
        FileConverter(load_config(_config(tmp_path))).convert(tmp_path / "data.xyz")
    assert (str(refused.value), refused.value.hint.action) == (
        f"{tmp_path / 'data.xyz'}: unsupported file type .xyz; "
        "format_rows() of haiku.core.convert.formats lists the supported ones",
        "list-formats",
    )


def test_haiku_ingester_formats_prints_the_table(tmp_path):
    done = run_main_in_process(ingester_main, [str(BIN / "haiku-ingester"), "formats", "--json"])
    assert done.returncode == 0, done.stderr
    rows = {row["extension"]: row for row in json.loads(done.stdout)}
    assert rows[".pptx"]["converter"] == "pptx" and rows[".py"]["language"] == "python"
    assert rows[".png"]["converter"] == "image" and len(rows) > 87
