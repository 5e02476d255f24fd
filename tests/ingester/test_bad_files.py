"""Files the pipeline cannot take end as dead jobs with a clear error; the rest is ingested.

Empty files, files over max_file_size and text files that are not text are skipped
instead, never dead (test_skipped_files.py).
"""

from __future__ import annotations

import json
import os

import pytest
from ingester_support import fs_source, run_cli, snapshot, write_files, write_ingester_config

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

RUNNING_AS_ROOT = os.geteuid() == 0
EXPECTED_ERRORS = {
    "corrupt.pdf": "docling could not convert",
    "pipe.md": "FIFO",
    "loop.md": "symlink loop",
    "zipped.pdf": "the bytes are not .pdf content",  # a zip named .pdf: never converted as docx
    "server.key": "a PEM private key file, not a Keynote presentation",  # skipped, never indexed
}
PEM_KEY = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"


def _zip_bytes() -> bytes:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("word/document.xml", "<w:document/>")
    return buffer.getvalue()


@pytest.fixture(scope="module")
async def bad_world(tmp_path_factory):
    root = tmp_path_factory.mktemp("bad")
    folder = root / "docs"
    write_files(
        folder,
        {
            "good.md": "# Good\n\nThis one is fine.\n",
            "corrupt.pdf": b"%PDF-1.4\n1 0 obj << /Type /Catalog >>\ngarbage\x00\x01\x02 trailer",
            "zipped.pdf": _zip_bytes(),
            "server.key": PEM_KEY,
        },
    )
    os.mkfifo(folder / "pipe.md")
    os.symlink(folder / "loop2.md", folder / "loop.md")
    os.symlink(folder / "loop.md", folder / "loop2.md")
    if not RUNNING_AS_ROOT:
        write_files(folder, {"unreadable.md": "# Secret\n\nNo access.\n"})
        os.chmod(folder / "unreadable.md", 0)
    config = write_ingester_config(
        root / "cfg.yaml",
        data_dir=root / "data",
        databases={"docs": root / "docs.lancedb"},
        ingested={"docs": [fs_source(folder, id="docs-folder", max_file_size=2000)]},
    )
    run = run_cli(["run-batch"], config=config)
    again = run_cli(["run-batch"], config=config)  # nothing changed: the same files die again
    status = json.loads(run_cli(["status", "--json"], config=config).stdout)
    dead = {
        job["uri"].rsplit("/", 1)[-1]: job["error"] for job in status["databases"][0]["sources"][0]["dead_jobs"]
    }
    return {"run": run, "again": again, "dead": dead, "documents": await snapshot(root / "docs.lancedb", "docs")}


@pytest.mark.parametrize("name", sorted(EXPECTED_ERRORS))
def test_a_bad_file_ends_as_a_dead_job_with_a_clear_error(bad_world, name):
    assert EXPECTED_ERRORS[name] in bad_world["dead"][name]


def test_a_symlink_loop_partner_is_dead_too(bad_world):
    assert "symlink loop" in bad_world["dead"]["loop2.md"]


@pytest.mark.skipif(RUNNING_AS_ROOT, reason="root reads a chmod 000 file anyway; the FIFO case covers unreadable files")
def test_an_unreadable_file_ends_as_a_dead_job(bad_world):
    assert "Permission denied" in bad_world["dead"]["unreadable.md"]


def test_the_good_file_beside_them_is_ingested(bad_world):
    assert [uri.rsplit("/", 1)[-1] for uri in bad_world["documents"]] == ["good.md"]


def test_run_batch_exits_1_after_printing_the_summary_with_the_dead_count(bad_world):
    run = bad_world["run"]
    dead = len(EXPECTED_ERRORS) + 1 + (0 if RUNNING_AS_ROOT else 1)
    assert (run.returncode, run.stdout.strip()) == (1, f"Batch complete: 1 succeeded, {dead} dead")


def test_run_batch_lists_each_dead_file_on_stderr(bad_world):
    assert all(f"/{name}:" in bad_world["run"].stderr for name in EXPECTED_ERRORS)


def test_a_rerun_over_unchanged_dead_files_reports_them_but_exits_0(bad_world):
    again = bad_world["again"]
    dead = len(EXPECTED_ERRORS) + 1 + (0 if RUNNING_AS_ROOT else 1)
    assert (again.returncode, again.stdout.strip()) == (
        0, f"Batch complete: 0 succeeded, 0 dead, {dead} still dead (unchanged since an earlier run)"
    )
    assert len([line for line in again.stderr.splitlines() if line.startswith("still dead: ")]) == dead
