"""An update killed between its chunk commit and its document commit (docs/storage.md).

The ingester is killed with SIGKILL at the moment it is about to commit the
document rows of an update, after the new chunks were committed. Before any
restart, no reader (search, get, list, expand-context) sees a chunk of the
new version while the document row still describes the old one; the next
run completes the update once.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from ingester_support import fs_source, run_cli, write_files, write_ingester_config

from support import cli_env

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

# Runs `haiku-ingester ARGS`, SIGKILLing itself when the store builds the first document row to commit.
_KILLED_BEFORE_DOCUMENT_COMMIT = """
import os, signal, sys
from haiku.core.store import writes

async def _die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

# The step between the chunks' commit and the document rows' (both tables' rows are built before either).
writes.StructurePlan.add_rows = _die
from haiku.ingester.cli import main
sys.argv = ["haiku-ingester", *sys.argv[1:]]
main()
"""

FILES = {f"n{i}.md": f"# Note {i}\n\nNote {i} talks about marmot{i} in the hills.\n" for i in range(3)}
EDITED = {f"n{i}.md": f"# Note {i}\n\nNote {i} now talks about quokka{i} on the island.\n" for i in range(3)}


async def raw_chunk_texts(location) -> list[str]:
    """Every chunk row's text, whatever its document row says (below the store's filtering)."""
    import lancedb

    db = await lancedb.connect_async(str(location))
    table = await db.open_table("chunks")
    return [row["content"] for row in await table.query().select(["content"]).to_list()]


async def test_an_update_killed_between_its_commits_shows_only_the_old_version_then_completes_once(tmp_path):
    from haiku.core.config import load_config
    from haiku.rag.client import HaikuRAG

    folder = tmp_path / "notes"
    write_files(folder, FILES)
    location = tmp_path / "notes.lancedb"
    config_path = write_ingester_config(
        tmp_path / "cfg.yaml",
        data_dir=tmp_path / "data",
        databases={"notes": location},
        ingested={"notes": [fs_source(folder, id="notes")]},
    )
    first = run_cli(["run-batch"], config=config_path)
    assert first.returncode == 0, first.stderr

    write_files(folder, EDITED)
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED_BEFORE_DOCUMENT_COMMIT, "--config", str(config_path), "run-batch"],
        capture_output=True,
        text=True,
        timeout=300,
        env=cli_env(),
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    # The kill came between the commits: the new chunks are stored, the document rows are the old ones.
    assert any("quokka" in text for text in await raw_chunk_texts(location))

    config = load_config(config_path)
    async with HaikuRAG(config=config, read_only=True) as client:
        documents = await client.list_documents(include_content=True)
        assert len(documents) == 3
        assert all("marmot" in d.content and "quokka" not in d.content for d in documents)
        for document in documents:
            fetched = await client.get_document_by_id(document.id, source="notes")
            assert fetched is not None and "quokka" not in fetched.content
            chunks = await client.get_chunks(document.id, source="notes")
            assert chunks and all("quokka" not in c.content and "marmot" in c.content for c in chunks)
            for chunk in chunks:
                assert await client.get_chunk_by_id(chunk.id, source="notes") is not None
        for search_type in ("fts", "vector", "hybrid"):
            results = await client.search("quokka0 quokka1 quokka2 island", search_type=search_type, limit=10)
            assert all("quokka" not in r.content for r in results), search_type
        old = await client.search("marmot1", search_type="fts", limit=10)
        assert old and all("marmot" in r.content for r in old)
        expanded = await client.expand_context(await client.search("hills island", limit=10))
        assert expanded and all("quokka" not in r.content for r in expanded)
    # doctor counts the hidden new-version chunks as orphans the next write removes.
    doctor = subprocess.run(
        [str(Path(sys.executable).parent / "haiku-rag"), "--config", str(config_path), "doctor", "--skip-providers"],
        capture_output=True, text=True, timeout=120, env=cli_env(),
    )
    assert "warn  orphan chunks: 3 chunks no reader shows" in doctor.stdout, doctor.stdout + doctor.stderr

    rerun = run_cli(["run-batch"], config=config_path)
    assert rerun.returncode == 0, rerun.stderr
    async with HaikuRAG(config=load_config(config_path), read_only=True) as client:
        documents = await client.list_documents(include_content=True)
        assert sorted(d.uri.rsplit("/", 1)[-1] for d in documents) == sorted(EDITED)
        assert all("quokka" in d.content for d in documents)
        for document in documents:
            chunks = await client.get_chunks(document.id, source="notes")
            assert len(chunks) == 1 and "quokka" in chunks[0].content
        found = await client.search("quokka1", search_type="fts", limit=10)
        assert len(found) == 1
    # Once: every stored chunk row is a current one, none of the old version and no duplicate.
    texts = await raw_chunk_texts(location)
    assert len(texts) == 3 and all("quokka" in t for t in texts)
