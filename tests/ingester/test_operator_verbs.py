"""run-batch --dry-run and --json, status --dead, retry: the operator's verbs (docs/ingester.md, docs/cli.md).

One folder, one database, driven through the real CLI: a dry run before
anything exists, a run with one file that dies at once and one that fails,
is retried and dies, a dry run after edits, then the dead files listed and
queued again.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from ingester_support import (
    CliResult,
    fs_source,
    queue_rows,
    run_cli,
    tiny_markdown,
    write_files,
    write_ingester_config,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


@dataclass
class VerbsWorld:
    root: Path
    folder: Path
    config: Path
    db: Path
    queue: Path
    runs: dict[str, CliResult] = field(default_factory=dict)
    notes: dict[str, object] = field(default_factory=dict)

    def json(self, label: str) -> dict:
        return json.loads(self.runs[label].stdout)

    def path(self, name: str) -> str:
        return str((self.folder / name).resolve())


@pytest.fixture(scope="module")
def verbs(tmp_path_factory) -> VerbsWorld:
    root = tmp_path_factory.mktemp("verbs")
    folder = root / "notes"
    write_files(folder, {"n1.md": tiny_markdown(1), "n2.md": tiny_markdown(2), "fake.pdf": "not a pdf at all\n"})
    # A name whose target cannot be resolved (a component over 255 bytes): stat fails with an error
    # that is not the file's fault, so the job is retried before it goes dead.
    os.symlink("x" * 300, folder / "unreachable.md")
    world = VerbsWorld(
        root=root,
        folder=folder,
        config=write_ingester_config(
            root / "cfg.yaml",
            data_dir=root / "data",
            databases={"notes": root / "notes.lancedb"},
            ingested={"notes": [fs_source(folder, id="notes-folder")]},
        ),
        db=root / "notes.lancedb",
        queue=root / "data" / "ingester.db",
    )
    world.runs["dry-first"] = run_cli(["run-batch", "--dry-run", "--json"], config=world.config)
    world.runs["dry-first-text"] = run_cli(["run-batch", "--dry-run"], config=world.config)
    world.notes["created_after_dry_run"] = sorted(p.name for p in root.iterdir())
    world.runs["first"] = run_cli(["run-batch", "--json"], config=world.config)
    world.runs["status"] = run_cli(["status"], config=world.config)
    world.runs["dead"] = run_cli(["status", "--dead"], config=world.config)
    world.runs["dead-json"] = run_cli(["status", "--dead", "--json"], config=world.config)

    (folder / "n1.md").write_text("# Note 1\n\nNote one now speaks of lighthouses.\n")
    (folder / "n2.md").unlink()
    write_files(folder, {"n3.md": tiny_markdown(3)})
    jobs_before = queue_rows(world.queue, "SELECT COUNT(*) FROM jobs")[0][0]
    world.runs["dry-changed"] = run_cli(["run-batch", "--dry-run", "--json"], config=world.config)
    world.notes["jobs_unchanged_by_dry_run"] = jobs_before == queue_rows(world.queue, "SELECT COUNT(*) FROM jobs")[0][0]

    dead = json.loads(world.runs["dead-json"].stdout)["dead"]
    fake = next(d for d in dead if d["path"].endswith("fake.pdf"))
    world.runs["retry-none"] = run_cli(["retry"], config=world.config)
    world.runs["retry-bogus"] = run_cli(["retry", "999999"], config=world.config)
    world.runs["retry-one"] = run_cli(["retry", str(fake["job_id"])], config=world.config)
    world.notes["after_retry"] = json.loads(run_cli(["status", "--json"], config=world.config).stdout)
    world.runs["retry-all"] = run_cli(["retry", "--all", "--db-name", "notes"], config=world.config)
    return world


def _files(report: dict) -> dict[str, str]:
    [database] = report["databases"]
    return {Path(f["path"]).name: f["action"] for f in database["files"]}


# --- run-batch --dry-run ---------------------------------------------------------------------


def test_a_dry_run_before_the_first_run_would_add_every_file(verbs):
    report = verbs.json("dry-first")
    assert (report["dry_run"], report["planned"], report["jobs"]) == (
        True, {"add": 4, "update": 0, "delete": 0}, None,
    )
    assert _files(report) == {"n1.md": "add", "n2.md": "add", "fake.pdf": "add", "unreachable.md": "add"}


def test_a_dry_run_creates_no_database_and_no_queue(verbs):
    assert verbs.notes["created_after_dry_run"] == ["cfg.yaml", "notes"]


def test_a_dry_run_in_text_names_each_file_and_its_action_and_exits_0(verbs):
    run = verbs.runs["dry-first-text"]
    assert run.returncode == 0
    assert f"add: database 'notes', source notes-folder: {verbs.path('n1.md')}" in run.stdout.splitlines()
    assert run.stdout.splitlines()[-1] == "Dry run: would add 4, update 0 and delete 0 file(s); nothing was written"


def test_a_dry_run_after_edits_says_what_would_be_added_updated_and_deleted(verbs):
    report = verbs.json("dry-changed")
    assert _files(report) == {
        "n1.md": "update", "n2.md": "delete", "n3.md": "add", "fake.pdf": "add", "unreachable.md": "add",
    }
    assert report["planned"] == {"add": 3, "update": 1, "delete": 1}


def test_a_dry_run_writes_no_job(verbs):
    assert verbs.notes["jobs_unchanged_by_dry_run"] is True


# --- run-batch --json ------------------------------------------------------------------------


def test_run_batch_json_counts_per_database_and_lists_the_dead_files(verbs):
    run = verbs.runs["first"]
    report = json.loads(run.stdout)
    assert run.returncode == 1 and (report["dry_run"], report["ok"]) == (False, False)
    [database] = report["databases"]
    assert database["name"] == "notes" and database["planned"] == {"add": 4, "update": 0, "delete": 0}
    jobs = database["jobs"]
    assert (jobs["succeeded"], jobs["written"], jobs["dead"], jobs["still_dead"]) == (2, 2, 2, 0)
    assert jobs["chunks"] >= 2 and report["jobs"] == jobs
    outcomes = {Path(f["path"]).name: (f["action"], f["outcome"]) for f in database["files"]}
    assert outcomes == {"fake.pdf": ("add", "dead"), "unreachable.md": ("add", "dead")}


def test_run_batch_json_reports_the_attempts_that_failed_and_were_retried(verbs):
    # unreachable.md fails twice (max_attempts 2): one retried attempt, then dead
    assert verbs.json("first")["databases"][0]["jobs"]["retried"] == 1


def test_a_dead_files_reason_does_not_repeat_its_path(verbs):
    [fake] = [f for f in verbs.json("first")["databases"][0]["files"] if f["path"].endswith("fake.pdf")]
    assert fake["path"] == verbs.path("fake.pdf") and fake["path"] not in fake["reason"]
    assert "not .pdf content" in fake["reason"]


def test_run_batch_json_and_dry_run_json_share_one_schema(verbs):
    run, dry = verbs.json("first"), verbs.json("dry-first")
    assert run.keys() == dry.keys()
    assert run["databases"][0].keys() == dry["databases"][0].keys()
    assert run["databases"][0]["files"][0].keys() == dry["databases"][0]["files"][0].keys()


# --- status ----------------------------------------------------------------------------------


def test_status_names_a_dead_file_once(verbs):
    lines = [line for line in verbs.runs["status"].stdout.splitlines() if "fake.pdf" in line]
    assert len(lines) == 1 and lines[0].count("fake.pdf") == 1, lines


def test_status_dead_lists_each_dead_file_with_its_job_id_and_reason(verbs):
    lines = verbs.runs["dead"].stdout.splitlines()
    assert len(lines) == 2
    [fake] = [line for line in lines if "fake.pdf" in line]
    assert fake.startswith("job ") and f"source notes-folder: {verbs.path('fake.pdf')}: " in fake
    assert fake.count("fake.pdf") == 1 and "not .pdf content" in fake


def test_status_dead_json_gives_job_id_path_and_reason(verbs):
    dead = json.loads(verbs.runs["dead-json"].stdout)["dead"]
    assert {Path(d["path"]).name for d in dead} == {"fake.pdf", "unreachable.md"}
    assert all(isinstance(d["job_id"], int) and d["reason"] and d["database"] == "notes" for d in dead)


# --- retry -----------------------------------------------------------------------------------


def test_retry_without_ids_or_all_is_refused_in_one_line(verbs):
    run = verbs.runs["retry-none"]
    assert run.returncode == 1 and run.stderr.startswith("Error: ") and "--all" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1


def test_retry_of_a_job_that_does_not_exist_names_it(verbs):
    run = verbs.runs["retry-bogus"]
    assert run.returncode == 1 and "job 999999 does not exist" in run.stderr


def test_retry_queues_the_named_dead_file_again(verbs):
    run = verbs.runs["retry-one"]
    assert run.returncode == 0 and run.stdout.splitlines()[-1] == "Queued 1 dead file(s) again"
    [source] = verbs.notes["after_retry"]["databases"][0]["sources"]
    assert (source["queued"], source["dead"]) == (1, 1)  # fake.pdf queued, unreachable.md still dead


def test_retry_all_queues_the_remaining_dead_files(verbs):
    run = verbs.runs["retry-all"]
    assert run.returncode == 0 and run.stdout.splitlines()[-1] == "Queued 1 dead file(s) again"
    assert "unreachable.md" in run.stdout
