"""Lifecycle commands on one database (docs/storage.md): in process where only output and exit
status count, as real subprocesses where another process holds a lock."""

from __future__ import annotations

import json
import os
import re
import sys

import pytest
from filelock import FileLock
from rag_support import EXTRA, add_document_at, build_config, config_data
from rag_support import cli as cli_process
from rag_support import invoke as cli
from rag_support import invoke_all as cli_all

from haiku.core.errors import MigrationRequiredError
from haiku.rag.client import HaikuRAG
from support import copy_database, write_config


@pytest.fixture
def papers_copy(built, tmp_path):
    """A private copy of papers, configured beside wiki, with a short writer-lock timeout."""
    path = copy_database(built["papers"], tmp_path / "papers.lancedb")
    data = config_data(tmp_path / "data", {"papers": path, "wiki": built["wiki"]}, storage={"writer_lock_timeout_s": 0.5})
    return {"path": path, "config": write_config(tmp_path / "haiku.rag.yaml", data), "data": data}


def test_vacuum_while_another_process_holds_the_writer_lock_exits_1_naming_the_database(papers_copy):
    lock = FileLock(str(papers_copy["path"] / ".haiku-writer.lock"))
    with lock:
        result = cli_process("--db-name", "papers", "vacuum", config=papers_copy["config"])
    assert result.returncode == 1
    assert result.stderr.startswith("Error:") and "'papers'" in result.stderr
    after = cli("--db-name", "papers", "vacuum", "--retention-seconds", "0", config=papers_copy["config"])
    assert after.returncode == 0, after.stderr
    # says what it removed
    assert re.fullmatch(
        r"Vacuum completed successfully\. Removed [1-9]\d* old table versions?, [\d.]+ (KiB|MiB|bytes)\.\n", after.stdout
    ), after.stdout


def test_lifecycle_commands_refuse_read_only(papers_copy):
    result = cli("--read-only", "--db-name", "papers", "tag", "create", "r9", config=papers_copy["config"])
    assert result.returncode == 1 and "read-only" in result.stderr


def test_tag_create_twice_and_delete_of_an_absent_tag_exit_1(papers_copy):
    config = papers_copy["config"]
    first = cli("--db-name", "papers", "tag", "create", "r1", config=config)
    assert first.returncode == 0, first.stderr
    second, absent = cli_all(
        (("--db-name", "papers", "tag", "create", "r1"), {"config": config}),
        (("--db-name", "papers", "tag", "delete", "nope"), {"config": config}),
    )
    assert second.returncode == 1 and "already exists" in second.stderr
    assert absent.returncode == 1 and "does not exist" in absent.stderr


async def test_tag_restore_returns_to_the_tagged_state_and_keeps_a_safety_tag(papers_copy, embedder, tmp_path):
    config = papers_copy["config"]
    created = cli("--db-name", "papers", "tag", "create", "r1", config=config)
    assert created.returncode == 0, created.stderr

    app_config = build_config(tmp_path / "data")
    async with HaikuRAG(db_path=papers_copy["path"], config=app_config) as client:
        at_r1 = {d.id for d in await client.list_documents()}
    await add_document_at(papers_copy["path"], app_config, embedder, *EXTRA)
    async with HaikuRAG(db_path=papers_copy["path"], config=app_config) as client:
        assert await client.count_documents() == 4

    declined = cli("--db-name", "papers", "tag", "restore", "r1", config=config, input="n\n")
    assert declined.returncode == 1
    restored = cli("--db-name", "papers", "tag", "restore", "r1", "--yes", config=config)
    assert restored.returncode == 0, restored.stderr
    tags = cli("--db-name", "papers", "tag", "list", config=config)
    assert tags.stdout.startswith("Tags\n")
    tables = r"chunks=v\d+ document_items=v\d+ documents=v\d+ page_images=v\d+ picture_vectors=v\d+ settings=v\d+"
    assert re.search(rf"^  r1: {tables}$", tags.stdout, re.M)
    assert re.search(r"^  before-restore-\d{8}T\d{6}Z: ", tags.stdout, re.M)
    async with HaikuRAG(db_path=papers_copy["path"], config=app_config, read_only=True) as client:
        assert {d.id for d in await client.list_documents()} == at_r1


async def test_tag_restore_is_refused_while_an_ingester_owns_the_database_and_forced_with_a_warning(papers_copy):
    from haiku.core.scope import DatabaseRef
    from haiku.core.store import OwnershipLock

    config = papers_copy["config"]
    assert cli("--db-name", "papers", "tag", "create", "r1", config=config).returncode == 0
    # What `haiku-ingester serve` holds while it runs; this test process is that other process.
    lock = OwnershipLock(DatabaseRef.configured("papers", papers_copy["path"]), "ingester")
    await lock.acquire()
    try:
        refused = cli_process("--db-name", "papers", "tag", "restore", "r1", "--yes", config=config)
        tags_after_refusal = json.loads(cli_process("--db-name", "papers", "tag", "list", "--json", config=config).stdout)
        forced = cli_process("--db-name", "papers", "tag", "restore", "r1", "--yes", "--force", "--json", config=config)
    finally:
        lock.release()
    assert (refused.returncode, refused.stderr.count("\n"), "owned by a running haiku-ingester" in refused.stderr,
            "stop the ingester first" in refused.stderr, "--force" in refused.stderr,
            f"(pid {os.getpid()}; its lock .haiku-ingester.lock is held)" in refused.stderr) == (
        1, 1, True, True, True, True
    ), refused.stderr
    assert [t["name"] for t in tags_after_refusal] == ["r1"]  # nothing was restored, no safety tag made
    assert (forced.returncode, forced.stderr.startswith("Warning: --force:"),
            json.loads(forced.stdout)["safety_tag"].startswith("before-restore-")) == (0, True, True), forced.stderr


def test_lifecycle_commands_print_json_for_ci(papers_copy, tmp_path):
    config = papers_copy["config"]
    results = [
        cli("--db-name", "papers", *args, "--json", config=config)
        for args in (("init",), ("migrate",), ("vacuum",), ("tag", "create", "j1"), ("tag", "delete", "j1"))
    ]
    assert [r.returncode for r in results] == [0] * 5, [r.stderr for r in results]
    init, migrate, vacuum, created, deleted = (json.loads(r.stdout) for r in results)
    assert (init["database"], init["created"], migrate, vacuum["database"], vacuum["vacuumed"]) == (
        "papers", False, {"database": "papers", "applied": []}, "papers", True
    )
    assert isinstance(vacuum["versions_removed"], int) and isinstance(vacuum["bytes_removed"], int)
    assert (created["database"], created["tag"]["name"], created["tag"]["complete"], deleted) == (
        "papers", "j1", True, {"database": "papers", "tag": "j1", "deleted": True}
    )
    fresh = write_config(tmp_path / "fresh.yaml", config_data(tmp_path / "data", {"fresh": tmp_path / "f.lancedb"}))
    made = cli("init", "--json", config=fresh)
    assert json.loads(made.stdout) == {"database": "fresh", "location": str(tmp_path / "f.lancedb"), "created": True}


def test_create_index_below_the_minimum_says_so_in_json_and_fails_with_strict(papers_copy):
    plain = cli("--db-name", "papers", "create-index", "--json", config=papers_copy["config"])
    strict = cli("--db-name", "papers", "create-index", "--json", "--strict", config=papers_copy["config"])
    expected = {"database": "papers", "created": False, "chunks": 5, "minimum_chunks": 256}
    assert [(r.returncode, json.loads(r.stdout)) for r in (plain, strict)] == [(0, expected), (1, expected)]


_WITH_MIGRATION = """
import sys
from haiku.core.store import MIGRATIONS, Migration, current_schema_version

async def _apply(store):
    return None

MIGRATIONS.append(Migration(current_schema_version() + 1, "add the test step", _apply))
from haiku.rag.cli import main
sys.argv = ["haiku-rag", *sys.argv[1:]]
main()
"""


async def test_a_pending_migration_is_reported_applied_once_and_then_none_pending(papers_copy, tmp_path, monkeypatch):
    from haiku.core.store import MIGRATIONS, Migration, current_schema_version

    async def step(store):
        return None

    step_version = current_schema_version() + 1
    monkeypatch.setattr(
        "haiku.core.store.migrations.MIGRATIONS", [*MIGRATIONS, Migration(step_version, "add the test step", step)]
    )
    with pytest.raises(MigrationRequiredError, match="'papers'"):
        async with HaikuRAG(config=build_config(tmp_path / "d", {"papers": str(papers_copy["path"])}), read_only=True):
            pass

    program = [sys.executable, "-c", _WITH_MIGRATION]
    config = papers_copy["config"]
    info = cli("--db-name", "papers", "info", config=config, program=program)
    assert info.returncode == 0, info.stderr
    assert f"{step_version}: add the test step" in info.stdout
    migrated = cli("--db-name", "papers", "migrate", config=config, program=program)
    assert migrated.returncode == 0, migrated.stderr
    assert "Applied 1 migration(s)" in migrated.stdout and f"  - {step_version}: add the test step" in migrated.stdout
    again = cli("--db-name", "papers", "migrate", config=config, program=program)
    assert again.returncode == 0 and "No migrations pending" in again.stdout


def test_migrate_on_a_missing_database_says_migration_failed(tmp_path):
    config = write_config(tmp_path / "c.yaml", config_data(tmp_path / "data", {"papers": tmp_path / "none.lancedb"}))
    result = cli("migrate", config=config)
    assert result.returncode == 1 and "Migration failed:" in result.stderr


async def test_create_index_on_few_chunks_warns_and_creates_nothing(papers_copy, tmp_path):
    result = cli("--db-name", "papers", "create-index", config=papers_copy["config"])
    assert result.returncode == 0, result.stderr
    assert "Warning:" in result.stderr and "256" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr  # said once, not also as a log line
    async with HaikuRAG(db_path=papers_copy["path"], config=build_config(tmp_path / "d"), read_only=True) as client:
        assert (await client.database().info()).vector_index["exists"] is False


def test_history_lists_versions_newest_first_and_an_unknown_table_exits_1(papers_copy):
    history, unknown = cli_all(
        (("--db-name", "papers", "history", "--json", "-l", "2"), {"config": papers_copy["config"]}),
        (("--db-name", "papers", "history", "-t", "nope"), {"config": papers_copy["config"]}),
    )
    assert history.returncode == 0, history.stderr
    tables = json.loads(history.stdout)
    assert set(tables) == {"chunks", "documents", "document_items", "page_images", "picture_vectors", "settings"}
    versions = [entry["version"] for entry in tables["chunks"]]
    assert versions == sorted(versions, reverse=True) and len(versions) <= 2
    # One line, no traceback, listing the tables there are.
    assert (unknown.returncode, unknown.stderr) == (
        1, "Error: unknown table 'nope'; the tables are chunks, document_items, documents, page_images, picture_vectors, settings\n"
    )


def test_doctor_reports_each_check_and_fails_on_a_missing_database(papers_copy, tmp_path):
    healthy = cli("--db-name", "papers", "doctor", "--skip-providers", config=papers_copy["config"])
    assert healthy.returncode == 0, healthy.stdout + healthy.stderr
    assert all(line.split()[0] in {"ok", "warn"} for line in healthy.stdout.splitlines())
    config = write_config(tmp_path / "m.yaml", config_data(tmp_path / "data", {"papers": tmp_path / "none.lancedb"}))
    missing = cli("doctor", "--skip-providers", "--json", config=config)
    assert missing.returncode == 1
    assert {c["name"]: c["status"] for c in json.loads(missing.stdout)}["database"] == "fail"


def test_download_models_says_what_it_loaded(tmp_path):
    config = write_config(tmp_path / "c.yaml", config_data(tmp_path / "data"))
    result = cli("download-models", config=config)
    assert result.returncode == 0, result.stderr
    assert "all-MiniLM-L6-v2" in result.stdout and "384 dimensions" in result.stdout and "tokenizer" in result.stdout
    assert "document encoder: ONNX Runtime" in result.stdout and "query encoder: ONNX Runtime" in result.stdout
    broken = write_config(tmp_path / "b.yaml", config_data(
        tmp_path / "data", embeddings={"model": {"name": str(tmp_path / "no-such-model")}}
    ))
    failed = cli("download-models", config=broken)
    assert failed.returncode == 1 and failed.stderr.startswith("Error downloading models:")
