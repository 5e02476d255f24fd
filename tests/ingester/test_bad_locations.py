"""A database location the ingester cannot write ends as ``Error: database 'NAME' …`` (docs/ingester.md).

Exit 1, no traceback, and the location never appears: a database is named, not located.
"""

from __future__ import annotations

import shutil
import subprocess
import uuid

import pytest
from ingester_support import fs_source, run_cli, write_files, write_ingester_config


def _config(tmp_path, location):
    folder = tmp_path / "notes"
    write_files(folder, {"a.md": "# A\n\nA short note.\n"})
    return write_ingester_config(
        tmp_path / "cfg.yaml",
        data_dir=tmp_path / "data",
        databases={"notes": location},
        ingested={"notes": [fs_source(folder, id="notes")]},
    )


def _refused(result, location, why: str) -> None:
    assert result.returncode == 1, result.stderr
    assert result.stderr.strip().splitlines()[-1] == f"Error: database 'notes' cannot be written: {why}"
    assert "Traceback" not in result.stderr and str(location) not in result.stderr


def test_a_location_that_is_a_regular_file_is_refused_naming_the_database(tmp_path):
    location = tmp_path / "notes.lancedb"
    location.write_text("not a database")
    config = _config(tmp_path, location)
    for command in (["run-batch"], ["serve"]):
        _refused(run_cli(command, config=config, timeout=60), location, "its location exists and is not a directory")


@pytest.fixture
def read_only_mount(tmp_path):
    """A tmpfs mounted read-only (needs root and mount rights; skipped without them)."""
    mount = tmp_path / f"ro-{uuid.uuid4().hex[:6]}"
    mount.mkdir()
    if shutil.which("mount") is None:
        pytest.skip("no mount command")
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount)], capture_output=True)
    if made.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True)


def test_a_location_on_a_read_only_mount_is_refused_naming_the_database(tmp_path, read_only_mount):
    location = read_only_mount / "notes.lancedb"
    location.mkdir()
    subprocess.run(["mount", "-o", "remount,ro", str(read_only_mount)], check=True)
    config = _config(tmp_path, location)
    _refused(run_cli(["run-batch"], config=config, timeout=60), location, "its location is on a read-only file system")
