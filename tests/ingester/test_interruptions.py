"""Stopping the daemon mid-work: SIGTERM drains, kill -9 loses nothing acknowledged (docs/ingester.md)."""

from __future__ import annotations

import signal
import time

import pytest
from ingester_support import (
    ServeProcess,
    chunk_document_ids,
    fs_source,
    queue_rows,
    run_cli,
    snapshot,
    tiny_markdown,
    wait_until,
    write_files,
    write_ingester_config,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

FILES = 200
GRACE_S = 5


def succeeded(queue) -> int:
    if not queue.exists():
        return 0
    return queue_rows(queue, "SELECT COUNT(*) FROM jobs WHERE status = 'succeeded'")[0][0]


@pytest.fixture(scope="module")
async def interrupted(tmp_path_factory):
    root = tmp_path_factory.mktemp("interrupt")
    folder = root / "notes"
    write_files(folder, {f"n{i:03d}.md": tiny_markdown(i) for i in range(FILES)})

    def config_for(name: str):
        return write_ingester_config(
            root / f"{name}.yaml",
            data_dir=root / f"{name}-data",
            databases={"notes": root / f"{name}.lancedb"},
            ingested={"notes": [fs_source(folder, id="notes", poll_interval_s=4)]},
            workers={"shutdown_grace_s": GRACE_S},
            # Encoder batches of 4 keep the daemon's jobs in flight to 32 (8 batches), so work is
            # still queued when it is stopped, however fast the machine encodes 200 tiny notes.
            embeddings={"batch_size": 4},
        )

    config, queue = config_for("crash"), root / "crash-data" / "ingester.db"
    facts: dict[str, object] = {}

    daemons: list[ServeProcess] = []
    try:
        # 1. SIGTERM in the middle of the work
        first = ServeProcess(config, root, name="first")
        daemons.append(first)
        first.wait_for_message("READY=1", timeout=180)
        wait_until(lambda: succeeded(queue) >= 5, 240, interval=0.1)
        facts["before_sigterm"] = succeeded(queue)
        started = time.monotonic()
        first.signal(signal.SIGTERM)
        facts["sigterm_exit"] = first.stop(timeout=GRACE_S + 60)
        facts["sigterm_seconds"] = time.monotonic() - started
        facts["claimed_after_sigterm"] = queue_rows(
            queue, "SELECT COUNT(*) FROM jobs WHERE status = 'claimed'"
        )[0][0]
        facts["after_sigterm"] = succeeded(queue)

        # 2. a restarted daemon resumes; kill -9 it in the middle of the work
        second = ServeProcess(config, root, name="second")
        daemons.append(second)
        second.wait_for_message("READY=1", timeout=180)
        facts["resumed"] = wait_until(lambda: succeeded(queue) > facts["after_sigterm"] + 5, 240, interval=0.1)
        second.proc.kill()
        second.proc.wait()
    finally:
        for daemon in daemons:  # never leave a daemon behind, whatever failed above
            daemon.stop(timeout=30)
    acked = {row[0] for row in queue_rows(queue, "SELECT uri FROM jobs WHERE status = 'succeeded'")}
    facts["acked"] = acked
    facts["after_kill"] = await snapshot(root / "crash.lancedb", "notes")
    facts["unfinished_at_kill"] = queue_rows(
        queue, "SELECT COUNT(*) FROM jobs WHERE status IN ('queued', 'claimed')"
    )[0][0]

    # 3. restart, and a clean run of the same files elsewhere to compare with
    facts["restart"] = run_cli(["run-batch"], config=config, timeout=600)
    facts["final"] = await snapshot(root / "crash.lancedb", "notes")
    facts["final_chunk_documents"] = await chunk_document_ids(root / "crash.lancedb")
    facts["claimed_after_restart"] = queue_rows(queue, "SELECT COUNT(*) FROM jobs WHERE status = 'claimed'")[0][0]
    facts["clean_run"] = run_cli(["run-batch"], config=config_for("clean"), timeout=600)
    facts["clean"] = await snapshot(root / "clean.lancedb", "notes")
    return facts


def content(state):
    return {uri: (doc.title, doc.content_hash, doc.chunk_texts) for uri, doc in state.items()}


def test_sigterm_during_work_exits_0(interrupted):
    assert interrupted["sigterm_exit"] == 0


def test_sigterm_exits_within_shutdown_grace(interrupted):
    assert interrupted["sigterm_seconds"] < GRACE_S + 10


def test_sigterm_leaves_no_job_claimed(interrupted):
    assert interrupted["claimed_after_sigterm"] == 0


def test_a_restarted_daemon_resumes_the_queue(interrupted):
    assert interrupted["resumed"]


def test_kill_9_happened_with_work_left_to_do(interrupted):
    assert interrupted["unfinished_at_kill"] > 0


def test_no_acknowledged_document_is_lost_by_kill_9(interrupted):
    assert interrupted["acked"] <= set(interrupted["after_kill"])


def test_the_restart_after_kill_9_completes_the_batch(interrupted):
    restart = interrupted["restart"]
    assert restart.returncode == 0 and restart.stdout.startswith("Batch complete:")


def test_after_kill_9_and_restart_the_documents_equal_a_clean_runs(interrupted):
    assert interrupted["clean_run"].returncode == 0
    assert len(interrupted["final"]) == FILES and content(interrupted["final"]) == content(interrupted["clean"])


def test_after_kill_9_and_restart_no_document_has_duplicate_chunks(interrupted):
    documents = interrupted["final_chunk_documents"]
    expected = sum(len(doc.chunk_ids) for doc in interrupted["final"].values())
    assert len(documents) == expected


def test_after_kill_9_and_restart_no_chunk_is_orphaned(interrupted):
    assert set(interrupted["final_chunk_documents"]) == {doc.id for doc in interrupted["final"].values()}


def test_no_job_is_left_claimed_after_the_restart(interrupted):
    assert interrupted["claimed_after_restart"] == 0
