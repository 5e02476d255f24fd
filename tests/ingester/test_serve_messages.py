"""What `reprocess` and `status` say beside a running `serve` (docs/ingester.md): the refusal names
serve's pid, and after a refused reload `status` says serve keeps the settings it started with."""

from __future__ import annotations

import json
import signal

import pytest
import yaml
from ingester_support import ServeProcess, fs_source, run_cli, wait_until, write_files, write_ingester_config

from support import write_config

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def beside_serve(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("beside-serve")
    write_files(root / "docs", {"a.md": "# Tides\n\nThe estuary fills twice a day.\n"})
    config = write_ingester_config(
        root / "haiku.rag.yaml", data_dir=root / "data", databases={"notes": root / "notes.lancedb"},
        ingested={"notes": [fs_source(root / "docs")]},
    )  # fmt: skip
    daemon = ServeProcess(config, root)
    facts: dict = {}
    try:
        facts["ready"] = daemon.wait_for_message("READY=1", timeout=180)
        facts["reprocess"] = run_cli(["reprocess", "--db-name", "notes"], config=config)
        changed = yaml.safe_load(config.read_text())
        changed["processing"] = {"chunk_size": 100}
        write_config(config, changed)
        daemon.signal(signal.SIGHUP)
        facts["refused"] = wait_until(lambda: "reload refused" in daemon.log_text(), 60)
        facts["status"] = run_cli(["status"], config=config)
        facts["status_json"] = run_cli(["status", "--json"], config=config)
    finally:
        daemon.stop(timeout=120)
    facts["pid"] = daemon.proc.pid
    return facts


def test_reprocess_beside_serve_is_refused_naming_serves_pid_and_saying_stop_serve_first(beside_serve):
    done = beside_serve["reprocess"]
    assert (
        beside_serve["ready"], done.returncode, done.stderr.strip()
    ) == (
        True, 1,
        f"Error: database 'notes' is owned by `haiku-ingester serve`, pid {beside_serve['pid']} (its lock "
        ".haiku-ingester.lock is held): stop serve first; a database has one ingester at a time",
    ), done.stderr  # fmt: skip


def test_status_after_a_refused_reload_says_serve_keeps_the_settings_it_started_with(beside_serve):
    text = beside_serve["status"].stdout
    running = json.loads(beside_serve["status_json"].stdout)["running"]
    assert (
        beside_serve["refused"] is not False,
        "files ingested from now on use the configured ones" in text,
        "the running serve (pid" in text and "keeps ingesting with those it started with until it is restarted" in text
        and "serve refuses to reload them" in text,
        "processing.chunk_size 256 -> 100" in text,
        running["processing"],
    ) == (
        True, False, True, True,
        {"applied": False, "changes": [{"key": "processing.chunk_size", "running": 256, "configured": 100}]},
    ), text  # fmt: skip
