"""``reprocess --all``: every ingested database re-processed in one run, one process, so the
embedding model and the conversion workers start once (docs/ingester.md, "Re-processing")."""

from __future__ import annotations

import json

import pytest
import yaml
from ingester_support import fs_source, run_cli, write_files, write_ingester_config

from support import write_config

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def _notes(title: str) -> str:
    body = " ".join(f"The {title} survey counted {n} nests along the dune path on a windy morning." for n in range(12))
    return f"# {title}\n\n{body}\n"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("reprocess-all")
    for name in ("birds", "plants"):
        write_files(root / name, {f"{name}.md": _notes(name), f"more-{name}.md": _notes(f"more {name}")})
    config = write_ingester_config(
        root / "cfg.yaml",
        data_dir=root / "data",
        databases={name: root / f"{name}.lancedb" for name in ("birds", "plants")},
        ingested={name: [fs_source(root / name, id=name)] for name in ("birds", "plants")},
        processing={"chunk_size": 128},
    )
    first = run_cli(["run-batch"], config=config)
    raw = yaml.safe_load(config.read_text())
    raw["processing"] = {"chunk_size": 48}
    write_config(config, raw)
    return {
        "first": first,
        "all": run_cli(["reprocess", "--all", "--json"], config=config, timeout=600),
        "again": run_cli(["reprocess", "--all"], config=config, timeout=600),
        "both": run_cli(["reprocess", "--all", "--db-name", "birds"], config=config),
        "neither": run_cli(["reprocess"], config=config),
    }


def test_one_run_re_processes_every_database_and_records_each_identity(runs):
    assert runs["first"].returncode == 0, runs["first"].stderr
    done = runs["all"]
    assert done.returncode == 0, done.stderr
    reports = {report["database"]: report for report in json.loads(done.stdout)["databases"]}
    assert sorted(reports) == ["birds", "plants"]
    for report in reports.values():
        assert report["recorded"] and report["jobs"]["written"] == 2
        assert report["changes"] == [{"key": "processing.chunk_size", "recorded": 128, "configured": 48}]
    started = [json.loads(line) for line in done.stderr.splitlines() if '"reprocess started"' in line]
    assert sorted(event["database"] for event in started) == ["birds", "plants"]


def test_a_second_run_finds_every_database_processed_already(runs):
    assert runs["again"].returncode == 0, runs["again"].stderr
    assert runs["again"].stdout.count("was processed with the configured settings already") == 2


def test_all_and_one_database_together_or_neither_is_refused_in_one_line(runs):
    assert runs["both"].returncode == 1 and "leave out --db-name, or --all" in runs["both"].stderr
    assert runs["neither"].returncode == 1 and "or re-process them all with --all" in runs["neither"].stderr
