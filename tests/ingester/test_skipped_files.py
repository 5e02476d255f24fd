"""Files a source does not take are skipped and counted by reason, never dead (docs/ingester.md, "Skipped files")."""

from __future__ import annotations

import asyncio
import json

import pytest
from ingester_support import fs_source, run_cli, snapshot, write_files, write_ingester_config

from haiku.core.config import FsSourceConfig, RetryConfig
from haiku.ingester.skips import SkipReason, SkipTally
from haiku.ingester.sources.fs import FolderSource
from haiku.ingester.sources.watching import Change, FolderWatcher

# What a source holds besides its good files: each file's reason, as reports name it.
SKIPPED = {
    "pkg/__init__.py": b"",  # empty: Python's own stdlib has three such files
    "empty.md": b"",
    "big.md": b"# Big\n\n" + b"word " * 1000,  # over max_file_size (2000)
    "site.tar.gz": b"\x1f\x8b\x08\x00gzip",  # a compressed archive: no converter for .tar
    "data.bin": b"\x01\x02binary",  # no converter for .bin
    ".hidden.md": b"# Hidden\n\ntext\n",  # the default ignore patterns take it
}


def make_source(root, **options) -> FolderSource:
    return FolderSource("db", FsSourceConfig(root=root, **options), RetryConfig())


def test_a_listing_counts_each_file_it_skips_by_reason_with_the_extensions_of_unsupported_ones(tmp_path):
    write_files(tmp_path, {"good.md": "# Good\n\nfine\n", **SKIPPED})
    tally = SkipTally()
    listing = make_source(tmp_path, max_file_size=2000).list_files(tally)
    assert [entry.path.name for entry in listing.values()] == ["good.md"]
    assert tally.as_json() == {
        "unsupported_type": {"files": 2, "extensions": {".bin": 1, ".gz": 1}},
        "too_large": {"files": 1},
        "excluded": {"files": 1},
        "empty": {"files": 2},
    }


def test_the_skip_reasons_are_the_keys_reports_use():
    assert [reason.value for reason in SkipReason] == ["unsupported_type", "too_large", "excluded", "empty", "not_text"]


async def test_a_watched_file_that_becomes_empty_is_a_skip_change_not_an_upsert(tmp_path):
    root = (tmp_path / "root").resolve()
    root.mkdir()
    path = root / "doc.md"
    path.write_text("# Doc\n\ntext\n")
    seen: list[Change] = []
    watcher = FolderWatcher(make_source(root), seen.extend, loop=asyncio.get_running_loop(), debounce_s=0.1)
    await asyncio.to_thread(watcher.start)
    try:
        path.write_bytes(b"")
        for _ in range(200):
            if seen:
                break
            await asyncio.sleep(0.05)
    finally:
        await asyncio.to_thread(watcher.stop)
    assert {c.kind for c in seen if c.path == path} == {"skip"}


@pytest.fixture(scope="module")
async def skip_world(tmp_path_factory):
    root = tmp_path_factory.mktemp("skips")
    folder = root / "docs"
    write_files(
        folder,
        {
            "good.md": "# Good\n\nThis one is fine.\n",
            "notes.md": "# Notes\n\nEmptied between two runs.\n",
            "binary.md": bytes(range(256)) * 4,  # NUL bytes in a text format: not text
            "tool": b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)),  # no extension, binary: not text
            "copyright": "Files: *\nCopyright: 2024 Nobody\nLicense: MIT\n",  # no extension, text: a document
            **SKIPPED,
        },
    )
    config = write_ingester_config(
        root / "cfg.yaml",
        data_dir=root / "data",
        databases={"docs": root / "docs.lancedb"},
        ingested={"docs": [fs_source(folder, id="docs-folder", max_file_size=2000)]},
    )
    world: dict = {"folder": folder}
    world["dry"] = run_cli(["run-batch", "--dry-run", "--json"], config=config)
    world["first"] = run_cli(["run-batch", "--json"], config=config)
    world["status"] = run_cli(["status", "--json"], config=config)
    world["status_text"] = run_cli(["status"], config=config)
    (folder / "notes.md").write_bytes(b"")
    world["emptied"] = run_cli(["run-batch"], config=config)
    world["again"] = run_cli(["run-batch", "--json"], config=config)
    world["documents"] = await snapshot(root / "docs.lancedb", "docs")
    return world


LISTED_SKIPS = {
    "unsupported_type": {"files": 2, "extensions": {".bin": 1, ".gz": 1}},
    "too_large": {"files": 1},
    "excluded": {"files": 1},
    "empty": {"files": 2},
}


@pytest.mark.slow
def test_run_batch_over_empty_files_exits_0_with_no_dead_file(skip_world):
    first = skip_world["first"]
    report = json.loads(first.stdout)
    assert (first.returncode, report["jobs"]["dead"], report["ok"]) == (0, 0, True), first.stderr[-2000:]


@pytest.mark.slow
def test_run_batch_json_counts_the_skipped_files_of_each_source_by_reason(skip_world):
    report = json.loads(skip_world["first"].stdout)
    assert report["databases"][0]["skipped"] == {"docs-folder": {**LISTED_SKIPS, "not_text": {"files": 2}}}
    assert report["skipped"]["not_text"] == {"files": 2}


@pytest.mark.slow
def test_a_dry_run_counts_the_files_the_listing_skips(skip_world):
    report = json.loads(skip_world["dry"].stdout)
    assert report["databases"][0]["skipped"] == {"docs-folder": LISTED_SKIPS}


@pytest.mark.slow
def test_status_json_carries_each_sources_skipped_files_by_reason(skip_world):
    status = json.loads(skip_world["status"].stdout)
    assert status["databases"][0]["sources"][0]["skipped"] == {**LISTED_SKIPS, "not_text": {"files": 2}}


@pytest.mark.slow
def test_status_says_how_many_files_a_source_skipped_and_why(skip_world):
    assert "8 skipped: 2 unsupported type (.bin 1, .gz 1), 1 over max_file_size" in skip_world["status_text"].stdout


@pytest.mark.slow
def test_a_file_that_becomes_empty_deletes_its_document_and_the_run_exits_0(skip_world):
    emptied = skip_world["emptied"]
    assert emptied.returncode == 0, emptied.stderr[-2000:]
    assert sorted(uri.rsplit("/", 1)[-1] for uri in skip_world["documents"]) == ["copyright", "good.md"]


@pytest.mark.slow
def test_run_batch_prints_each_sources_skipped_files_on_stderr(skip_world):
    assert "skipped: database 'docs', source docs-folder: 9 skipped:" in skip_world["emptied"].stderr
    assert ", 9 skipped" in skip_world["emptied"].stdout


@pytest.mark.slow
def test_a_file_skipped_as_not_text_is_counted_again_without_a_job_while_unchanged(skip_world):
    report = json.loads(skip_world["again"].stdout)
    assert report["skipped"]["not_text"] == {"files": 2}
    assert report["planned"] == {"add": 0, "update": 0, "delete": 0}


@pytest.mark.slow
def test_a_file_skipped_by_its_job_counts_as_skipped_not_succeeded(skip_world):
    report = json.loads(skip_world["first"].stdout)
    # good.md, notes.md and copyright; binary.md and tool are skipped (not text)
    assert report["jobs"]["succeeded"] == 3


def test_every_skip_reason_has_its_words_for_a_line_of_text():
    assert all(reason.text for reason in SkipReason)


async def test_a_sweep_ends_the_dead_entry_of_a_file_that_is_skipped_now(tmp_path, queue):
    from haiku.ingester.sources.sweep import sweep_source

    root = tmp_path / "docs"
    write_files(root, {"pkg/__init__.py": b"", "good.md": "# Good\n\nfine\n"})
    source = make_source(root)
    empty = (root / "pkg/__init__.py").resolve().as_uri()
    queue.jobs.enqueue("db", source.id, empty, "upsert", "r1")  # as an older release dead-lettered it
    [job] = queue.jobs.claim(["db"], limit=1, lease_ttl_s=30)
    queue.jobs.fail(job, "the file is empty (0 bytes)", retry_delay_s=None)
    await sweep_source(source, queue, process_started_at=0)
    jobs = queue.jobs.claim(["db"], limit=10, lease_ttl_s=30)
    assert [(j.uri, j.op) for j in jobs if j.uri == empty] == [(empty, "delete")]


def test_a_compression_bomb_is_skipped_as_too_large_and_a_gzipped_changelog_read_inflated(tmp_path):
    import gzip

    from haiku.ingester.errors import FileTooLargeError
    from haiku.ingester.sources.files import inspect_file, read_bytes

    bomb, changelog = tmp_path / "bomb.txt.gz", tmp_path / "changelog.Debian.gz"
    bomb.write_bytes(gzip.compress(b"a" * 5_000_000))  # 5 MB in about 5 kB
    changelog.write_bytes(gzip.compress(b"bc (1.07.1-3) unstable; urgency=medium\n"))
    with pytest.raises(FileTooLargeError, match="inflates to more than max_file_size"):
        read_bytes(inspect_file(bomb, max_file_size=100_000), max_file_size=100_000)
    facts = inspect_file(changelog, max_file_size=100_000)
    assert facts.format == "text" and read_bytes(facts, max_file_size=100_000).startswith(b"bc (1.07.1-3)")
