"""`haiku-ingester add` and `delete` as processes (docs/ingester.md, "Adding documents"): beside a
running `serve` (the daemon writes), from standard input, and killed with SIGKILL mid-way."""

from __future__ import annotations

import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ingester_support import (
    CLI,
    ServeProcess,
    queue_rows,
    run_cli,
    snapshot,
    wait_until,
    write_ingester_config,
)

from support import cli_env

pytestmark = pytest.mark.slow


def _add(config, *args: str, stdin: str | None = None) -> tuple[int, list[dict], str]:
    done = subprocess.run(
        [*CLI, "--config", str(config), "-q", "add", *args, "--json"],
        input=stdin, capture_output=True, text=True, timeout=240, env=cli_env(),
    )  # fmt: skip
    records = json.loads(done.stdout) if done.stdout.strip() else []
    return done.returncode, records, done.stderr


def test_add_and_delete_beside_a_running_serve_hand_their_work_to_the_daemon(tmp_path):
    notes, later = tmp_path / "notes.md", tmp_path / "later.md"
    notes.write_text("# Field notes\n\nThe heron waits in the shallows.\n")
    later.write_text("# Later\n\nOwls hunt at night.\n")
    config = write_ingester_config(
        tmp_path / "cfg.yaml", data_dir=tmp_path / "data", databases={"papers": tmp_path / "papers.lancedb"},
        ingested={"papers": []},  # a database fed only by add
    )  # fmt: skip
    serve = ServeProcess(config, tmp_path)
    try:
        assert serve.wait_for_message("READY=1"), serve.log_text()
        rc, [added], err = _add(config, str(notes), "--db-name", "papers")
        assert rc == 0, err
        assert added["outcome"] == "added" and added["chunks"] >= 1

        rc, [text], err = _add(
            config, "-", "--title", "Release notes", "--db-name", "papers", stdin="# Notes\n\nv1\n"
        )
        assert rc == 0, err
        assert (text["uri"], text["outcome"]) == ("text://papers/release-notes", "added")

        rc, [queued], err = _add(config, str(later), "--db-name", "papers", "--no-wait")
        assert (rc, queued["outcome"]) == (0, "queued"), err
        live = "SELECT COUNT(*) FROM jobs WHERE status IN ('queued', 'claimed')"
        assert wait_until(lambda: queue_rows(tmp_path / "data" / "ingester.db", live) == [(0,)], 60)

        deleted = run_cli(["delete", text["id"], "--db-name", "papers", "--json"], config=config)
        assert deleted.returncode == 0, deleted.stderr
        assert json.loads(deleted.stdout)[0]["outcome"] == "deleted"
        listed = subprocess.run(
            [str(Path(sys.executable).parent / "haiku-rag"), "--config", str(config), "--db-name", "papers", "list"],
            capture_output=True, text=True, timeout=120, env=cli_env(),
        )  # fmt: skip
        assert listed.returncode == 0, listed.stderr
        assert listed.stdout.count("ingester source: manual") == 2  # notes.md and later.md
    finally:
        assert serve.stop() == 0
    # The daemon did every write: the commands could not take its lock, and its log has the jobs.
    done = [json.loads(line) for line in serve.log_text().splitlines() if '"job done"' in line]
    assert {(d["source"], d["action"]) for d in done} >= {("manual", "written"), ("manual", "deleted")}
    assert len([d for d in done if d["action"] == "written"]) == 3


def _big_pdf(pages: int) -> bytes:
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=letter)
    for i in range(pages):
        pdf.drawString(72, 720, f"Page {i} of a long report about harbours, ships and tides.")
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


async def test_an_add_killed_mid_way_then_run_again_leaves_one_document_and_no_orphans(tmp_path):
    report = tmp_path / "report.pdf"
    report.write_bytes(_big_pdf(16))
    location = tmp_path / "papers.lancedb"
    config = write_ingester_config(
        tmp_path / "cfg.yaml", data_dir=tmp_path / "data", databases={"papers": location}, ingested={}
    )
    queue = tmp_path / "data" / "ingester.db"
    killed = subprocess.Popen(
        [*CLI, "--config", str(config), "-q", "add", str(report), "--db-name", "papers"],
        env=cli_env(), start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    claimed = "SELECT COUNT(*) FROM jobs WHERE status = 'claimed'"

    def claimed_once() -> bool:
        try:
            return queue.exists() and queue_rows(queue, claimed) == [(1,)]
        except sqlite3.OperationalError:  # the queue's file exists a moment before its tables
            return False

    assert wait_until(claimed_once, 120)
    time.sleep(1.0)  # converting now
    os.killpg(killed.pid, signal.SIGKILL)
    killed.wait()
    assert killed.returncode == -signal.SIGKILL

    rc, [again], err = _add(config, str(report), "--db-name", "papers")
    assert rc == 0, err
    assert again["outcome"] == "added" and again["chunks"] >= 1
    documents = await snapshot(location, "papers")
    assert list(documents) == [report.resolve().as_uri()]
    from haiku.core.config import load_config
    from haiku.core.scope import DatabaseScope
    from haiku.core.store import Store

    loaded = load_config(config)
    ref = DatabaseScope.resolve(loaded, database_name="papers").databases[0]
    async with await Store.open(ref, loaded, read_only=True) as store:
        assert await store.reads.count_orphan_chunks() == 0
        assert await store.reads.count_documents() == 1
    assert queue_rows(queue, "SELECT COUNT(*) FROM jobs WHERE status IN ('queued', 'claimed')") == [(0,)]
