"""run-batch over real folders and databases (docs/ingester.md)."""

from __future__ import annotations

import json

import pytest
from ingester_support import chunk_document_ids, fs_source, run_cli, write_files, write_ingester_config

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def test_one_run_batch_creates_both_databases(batch_world):
    assert (batch_world.a_db / "settings.lance").is_dir() and (batch_world.b_db / "settings.lance").is_dir()


def test_each_database_holds_only_its_own_folders_documents(batch_world):
    state = batch_world.states["first"]
    a_uris = {batch_world.uri(batch_world.a_dir / f"a{i}.md") for i in range(1, 5)}
    assert set(state["a"]) == a_uris and len(state["b"]) == 3 and not set(state["b"]) & a_uris


def test_the_first_run_reports_every_file_succeeded(batch_world):
    run = batch_world.runs["first"]
    assert (run.returncode, run.stdout.strip()) == (0, "Batch complete: 7 succeeded, 0 dead")


def test_documents_are_titled_by_their_first_heading_else_their_file_name(batch_world):
    titles = {uri.rsplit("/", 1)[-1]: doc.title for uri, doc in batch_world.states["first"]["b"].items()}
    assert titles == {"b1.md": "Birds", "b2.txt": "b2.txt", "b3.html": "Owls"}


def test_every_log_line_is_one_json_object_and_job_lines_name_database_and_source(batch_world):
    events = [json.loads(line) for line in batch_world.runs["first"].stderr.splitlines() if line.strip()]
    jobs = [e for e in events if e["event"] in ("job done", "sweep done")]
    assert len(jobs) == 9 and all(e["database"] in ("a", "b") and e["source"].startswith("folder-") for e in jobs)


def test_a_second_run_over_unchanged_files_enqueues_no_job(batch_world):
    assert batch_world.jobs["unchanged"] == batch_world.jobs["first"]


def test_a_second_run_over_unchanged_files_reports_nothing_done(batch_world):
    run = batch_world.runs["unchanged"]
    assert (run.returncode, run.stdout.strip()) == (0, "Batch complete: 0 succeeded, 0 dead")


def test_touching_a_file_without_changing_its_bytes_keeps_its_document_id_and_chunks(batch_world):
    uri = batch_world.uri(batch_world.a_dir / "a1.md")
    assert batch_world.states["changed"]["a"][uri] == batch_world.states["first"]["a"][uri]


def test_a_touched_file_whose_document_was_removed_meanwhile_is_converted_and_written_again(batch_world):
    uri = batch_world.uri(batch_world.a_dir / "a4.md")
    before, after = batch_world.states["first"]["a"][uri], batch_world.states["changed"]["a"][uri]
    assert after.id != before.id and after.chunk_texts == before.chunk_texts and after.chunk_texts


def test_editing_a_file_keeps_its_document_id(batch_world):
    uri = batch_world.uri(batch_world.a_dir / "a2.md")
    assert batch_world.states["changed"]["a"][uri].id == batch_world.states["first"]["a"][uri].id


def test_editing_a_file_replaces_its_chunks(batch_world):
    uri = batch_world.uri(batch_world.a_dir / "a2.md")
    before, after = batch_world.states["first"]["a"][uri], batch_world.states["changed"]["a"][uri]
    assert not set(before.chunk_ids) & set(after.chunk_ids) and "comets" in " ".join(after.chunk_texts)


def _written_lines(batch_world, label: str, database: str) -> list[dict]:
    events = [json.loads(line) for line in batch_world.runs[label].stderr.splitlines() if line.startswith("{")]
    return [e for e in events if e["event"] == "job done" and e["action"] == "written" and e["database"] == database]


def test_each_written_documents_log_line_counts_its_chunks_embedded_and_reused(batch_world):
    lines = _written_lines(batch_world, "changed", "a")
    edited = next(e for e in lines if e["uri"].endswith("/a2.md"))
    assert (edited["chunks"], edited["embedded"], edited["reused"]) == (1, 1, 0)
    assert all(e["chunks"] == e["embedded"] + e["reused"] for e in lines)


def test_status_json_totals_what_each_database_had_written_since_the_ingester_started(batch_world):
    lines = _written_lines(batch_world, "changed", "a")
    [database] = json.loads(batch_world.notes["status_after_changed"].stdout)["databases"]
    written = database["written"]
    assert {k: written[k] for k in ("documents", "chunks", "embedded", "reused")} == {
        "documents": len(lines),
        "chunks": sum(e["chunks"] for e in lines),
        "embedded": sum(e["embedded"] for e in lines),
        "reused": sum(e["reused"] for e in lines),
    }
    assert written["since"] is not None


def test_deleting_a_file_removes_its_document(batch_world):
    assert batch_world.uri(batch_world.a_dir / "a3.md") not in batch_world.states["changed"]["a"]


def test_the_delete_log_line_counts_the_chunks_it_removed(batch_world):
    uri = batch_world.uri(batch_world.a_dir / "a3.md")
    removed = len(batch_world.states["first"]["a"][uri].chunk_ids)
    events = [json.loads(line) for line in batch_world.runs["changed"].stderr.splitlines() if line.strip()]
    deletes = [e for e in events if e["event"] == "job done" and e.get("action") == "deleted"]
    assert [e["chunks"] for e in deletes] == [removed] and removed > 0


async def test_edits_and_deletes_leave_no_orphan_chunks(batch_world):
    documents = {doc.id for doc in batch_world.states["changed"]["a"].values()}
    assert set(await chunk_document_ids(batch_world.a_db)) == documents


def test_an_emptied_root_deletes_nothing(batch_world):
    assert batch_world.states["emptied"]["b"] == batch_world.states["changed"]["b"]


def test_an_emptied_root_makes_run_batch_exit_1_naming_the_source(batch_world):
    run = batch_world.runs["emptied"]
    assert run.returncode == 1 and "folder-b" in run.stderr and "lists no files" in run.stderr


def test_status_reports_the_failed_sweep(batch_world):
    report = json.loads(run_cli(["status", "--json", "--db-name", "b"], config=batch_world.config).stdout)
    [source] = report["databases"][0]["sources"]
    assert source["last_sweep_status"] == "failed" and "lists no files" in source["last_sweep_error"]


async def test_run_batch_with_db_name_ingests_only_that_database(tmp_path):
    from ingester_support import snapshot

    write_files(tmp_path / "A", {"x.md": "# X\n\nAbout x.\n"})
    write_files(tmp_path / "B", {"y.md": "# Y\n\nAbout y.\n"})
    config = write_ingester_config(
        tmp_path / "cfg.yaml",
        data_dir=tmp_path / "data",
        databases={"a": tmp_path / "a.lancedb", "b": tmp_path / "b.lancedb"},
        ingested={"a": [fs_source(tmp_path / "A")], "b": [fs_source(tmp_path / "B")]},
    )
    run = run_cli(["run-batch", "--db-name", "b"], config=config)
    b_docs = await snapshot(tmp_path / "b.lancedb", "b")
    assert (run.returncode, not (tmp_path / "a.lancedb").exists(), len(b_docs)) == (0, True, 1)
