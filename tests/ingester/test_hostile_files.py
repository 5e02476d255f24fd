"""Hostile files in a watched folder: links out of the root, names that are not UTF-8.

One folder, ingested with ``run-batch`` as an operator would: a symlink to a
file outside the root is skipped (its job dead at once with the reason, shown
by ``status``) unless the source sets ``follow_external_symlinks``; a symlink
to a file inside the root is ingested; a symlinked folder is not entered; a
file whose name is not UTF-8 is ingested and deleted like any other.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from ingester_support import fs_source, run_cli, snapshot, write_files, write_ingester_config

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

LATIN1_NAME = os.fsdecode(b"caf\xe9.md")  # "café.md" in Latin-1: not UTF-8


def _notes_config(root, folder, **source_options):
    """A config ingesting ``folder`` into the database notes under ``root``."""
    return write_ingester_config(
        root / "cfg.yaml",
        data_dir=root / "data",
        databases={"notes": root / "notes.lancedb"},
        ingested={"notes": [fs_source(folder, id="notes", **source_options)]},
    )


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    outside = root / "outside"
    write_files(outside, {"secret.md": "# Secret\n\nThe vault code is zebra42.\n"})
    write_files(outside / "dir", {"deep.md": "# Deep\n\nA file reached through a linked folder, walrus7.\n"})
    folder = root / "notes"
    write_files(folder, {"plain.md": "# Plain\n\nAn ordinary note about herons.\n"})
    (folder / LATIN1_NAME).write_text("# Cafe\n\nA note whose name is Latin-1, about espresso.\n")
    os.symlink(outside / "secret.md", folder / "secret-link.md")
    os.symlink(folder / "plain.md", folder / "inside-link.md")
    os.symlink(outside / "dir", folder / "linked-dir")
    return root, folder, _notes_config(root, folder)


def names(state) -> set[str]:
    return {os.fsdecode(Path(_path_of(uri)).name) for uri in state}


def _path_of(uri: str) -> str:
    from urllib.parse import unquote_to_bytes, urlparse

    return os.fsdecode(unquote_to_bytes(urlparse(uri).path))


async def test_links_out_of_the_root_are_skipped_and_reported_and_latin1_names_ingest(hostile):
    root, folder, config = hostile
    batch = run_cli(["run-batch"], config=config)
    state = await snapshot(root / "notes.lancedb", "notes")
    assert names(state) == {"plain.md", "inside-link.md", LATIN1_NAME}, batch.stderr
    assert not any("zebra42" in t or "walrus7" in t for doc in state.values() for t in doc.chunk_texts)
    latin1 = next(doc for uri, doc in state.items() if uri.endswith("caf%E9.md"))
    assert any("espresso" in t for t in latin1.chunk_texts)
    # Skipped once, saying why, and shown by status.
    events = [json.loads(line) for line in batch.stderr.splitlines() if line.startswith("{")]
    skipped = [e for e in events if "secret-link.md" in e.get("uri", "") and "outside the root" in e.get("error", "")]
    assert len(skipped) == 1, batch.stderr
    report = json.loads(run_cli(["status", "--json"], config=config).stdout)
    dead = report["databases"][0]["sources"][0]["dead_jobs"]
    assert [job["uri"].rsplit("/", 1)[-1] for job in dead] == ["secret-link.md"]
    assert "follow_external_symlinks" in dead[0]["error"]
    text = run_cli(["status"], config=config).stdout
    assert "secret-link.md" in text and "outside the root" in text

    # A name that is not UTF-8 is deleted like any other.
    (folder / LATIN1_NAME).unlink()
    assert run_cli(["run-batch"], config=config).returncode in (0, 1)
    assert names(await snapshot(root / "notes.lancedb", "notes")) == {"plain.md", "inside-link.md"}


async def test_follow_external_symlinks_ingests_a_link_out_of_the_root_and_turning_it_off_removes_it(tmp_path):
    outside = tmp_path / "outside"
    write_files(outside, {"shared.md": "# Shared\n\nA shared note about lynxes.\n"})
    write_files(outside / "dir", {"deep.md": "# Deep\n\nA file reached through a linked folder, walrus7.\n"})
    folder = tmp_path / "notes"
    folder.mkdir()
    os.symlink(outside / "shared.md", folder / "shared.md")
    os.symlink(outside / "dir", folder / "linked-dir")
    config = _notes_config(tmp_path, folder, follow_external_symlinks=True)
    batch = run_cli(["run-batch"], config=config)
    assert batch.returncode == 0, batch.stderr
    assert names(await snapshot(tmp_path / "notes.lancedb", "notes")) == {"shared.md"}  # not the linked folder

    # Turned off again: the document the link brought in goes, and the link is reported.
    config = write_ingester_config(
        tmp_path / "cfg.yaml",
        data_dir=tmp_path / "data",
        databases={"notes": tmp_path / "notes.lancedb"},
        ingested={"notes": [fs_source(folder, id="notes")]},
    )
    again = run_cli(["run-batch"], config=config)
    assert again.returncode == 1 and "outside the root" in again.stderr
    assert names(await snapshot(tmp_path / "notes.lancedb", "notes")) == set()
