"""A full disk under ``run-batch``, simulated at the write layer (docs/ingester.md, "Databases, ownership, recovery").

The real failure: Lance raises ENOSPC, and recording the failure in the queue
(SQLite, on the same file system) fails too. ``run-batch`` must end in bounded
time with exit 1 and a message naming the database and "no space left", lose
nothing acknowledged, report no job dead, and a rerun after space is freed
completes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from ingester_support import fs_source, queue_rows, run_cli, snapshot, write_files, write_ingester_config

from support import cli_env

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

# `haiku-ingester ARGS` on a "full disk": MODE lance = the database write fails with ENOSPC and so
# does recording the failure in the queue; MODE queue = the write succeeds, acknowledging it fails.
_ON_A_FULL_DISK = """
import errno, os, sqlite3, sys
from haiku.core.store.writes import Writes
from haiku.ingester.queue.jobs import JobQueue

def queue_full(*args, **kwargs):
    raise sqlite3.OperationalError("database or disk is full")

if os.environ["DISK_FULL_MODE"] == "lance":
    async def enospc(*args, **kwargs):
        raise OSError(errno.ENOSPC, "LanceError(IO): No space left on device (os error 28)")
    Writes.upsert_documents = enospc
    JobQueue.fail = queue_full
else:
    JobQueue.complete = queue_full
from haiku.ingester.cli import main
sys.argv = ["haiku-ingester", *sys.argv[1:]]
main()
"""

FILES = {f"n{i}.md": f"# Note {i}\n\nNote {i} is about otters{i}.\n" for i in range(3)}


def full_disk_run(config, mode: str) -> tuple[subprocess.CompletedProcess, float]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", _ON_A_FULL_DISK, "--config", str(config), "run-batch"],
        capture_output=True,
        text=True,
        timeout=180,
        env=cli_env(DISK_FULL_MODE=mode),
    )
    return done, time.monotonic() - started


def _notes_world(tmp_path):
    """FILES in a folder, ingested into the database notes; the config file's path."""
    folder = tmp_path / "notes"
    write_files(folder, FILES)
    return write_ingester_config(
        tmp_path / "cfg.yaml",
        data_dir=tmp_path / "data",
        databases={"notes": tmp_path / "notes.lancedb"},
        ingested={"notes": [fs_source(folder, id="notes")]},
    )


@pytest.mark.parametrize("mode", ["lance", "queue"])
async def test_a_full_disk_ends_run_batch_with_exit_1_naming_the_database_and_a_rerun_completes(tmp_path, mode):
    config = _notes_world(tmp_path)
    full, seconds = full_disk_run(config, mode)
    assert full.returncode == 1, full.stderr
    assert seconds < 120
    assert "Error: database 'notes': no space left on device" in full.stderr
    assert "Traceback" not in full.stderr and str(tmp_path / "notes.lancedb") not in full.stderr
    queue = tmp_path / "data" / "ingester.db"
    assert queue_rows(queue, "SELECT COUNT(*) FROM jobs WHERE status = 'dead'")[0][0] == 0
    report = json.loads(run_cli(["status", "--json"], config=config).stdout)
    assert report["databases"][0]["sources"][0]["dead"] == 0

    rerun = run_cli(["run-batch"], config=config)
    assert rerun.returncode == 0, rerun.stderr
    state = await snapshot(tmp_path / "notes.lancedb", "notes")
    assert sorted(uri.rsplit("/", 1)[-1] for uri in state) == sorted(FILES)
    assert all(len(doc.chunk_ids) == 1 for doc in state.values())
    assert queue_rows(queue, "SELECT COUNT(*) FROM jobs WHERE status = 'dead'")[0][0] == 0


async def test_serve_on_a_full_disk_exits_1_naming_the_database_and_reports_no_job_dead(tmp_path):
    config = _notes_world(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", _ON_A_FULL_DISK, "--config", str(config), "serve"],
        capture_output=True,
        text=True,
        timeout=180,
        env=cli_env(DISK_FULL_MODE="queue"),
    )
    assert done.returncode == 1, done.stderr
    assert "Error: database 'notes': no space left on device" in done.stderr
    queue = tmp_path / "data" / "ingester.db"
    assert queue_rows(queue, "SELECT COUNT(*) FROM jobs WHERE status = 'dead'")[0][0] == 0
    rerun = run_cli(["run-batch"], config=config)
    assert rerun.returncode == 0, rerun.stderr
    assert queue_rows(queue, "SELECT COUNT(*) FROM jobs WHERE status = 'dead'")[0][0] == 0
