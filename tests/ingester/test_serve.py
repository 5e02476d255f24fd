"""serve under systemd's notify protocol: watching, reloading, refusing, staying up."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest
import yaml
from ingester_support import (
    ServeProcess,
    fs_source,
    queue_rows,
    run_cli,
    snapshot,
    wait_until,
    write_files,
    write_ingester_config,
)

from support import write_config

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

PICKUP_S = 60  # generous for a loaded CI machine; typical pickup is a second or two
NEVER = 10**6  # poll interval: no periodic sweep during the test, so pickups are the watcher's


def uri(path) -> str:
    return path.resolve().as_uri()


async def wait_for_documents(location, name, predicate, timeout=PICKUP_S):
    """The database's documents by uri once ``predicate`` holds of them, or as they stand at the timeout.

    A read that fails (the database not created yet) is tried again, never taken for an
    empty database, of which "a document is gone" would hold; one still failing at the
    timeout is raised.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            state = await snapshot(location, name)
        except Exception:
            if time.monotonic() > deadline:
                raise
        else:
            if predicate(state) or time.monotonic() > deadline:
                return state
        time.sleep(0.3)


def versioned(n: int) -> str:
    parts = "".join(f"## Part {p}\n\nEdition{n} of part {p} about glaciers and fjords.\n\n" for p in range(3))
    return f"# Versions\n\n{parts}"


async def search_while_replacing(location, path, versions: int = 8) -> list[list[str]]:
    """Edit ``path`` ``versions`` times while a reader searches; every result list it saw."""
    import asyncio
    import re

    from haiku.core.config import config_from_dict
    from haiku.core.scope import DatabaseRef
    from haiku.core.store import Store

    path.write_text(versioned(0))
    await wait_for_documents(location, "b", lambda s: uri(path) in s)
    config = config_from_dict({"lancedb": {"read_consistency_interval_seconds": 0}})
    reader = await Store.open(DatabaseRef.configured("b", location), config, read_only=True)
    observed: list[list[str]] = []
    done = asyncio.Event()

    async def read() -> None:
        while not done.is_set():
            hits = await reader.search("glaciers fjords", query_vector=None, search_type="fts", limit=50)
            observed.append([re.search(r"Edition\d+", h.content).group(0) for h in hits if h.document_uri == uri(path)])
            await asyncio.sleep(0.02)

    async def write() -> None:
        try:
            for n in range(1, versions):
                path.write_text(versioned(n))
                await asyncio.sleep(0.7)
            final = f"Edition{versions - 1}"
            for _ in range(100):
                if observed and observed[-1] and observed[-1][0] == final:
                    break
                await asyncio.sleep(0.2)
        finally:
            done.set()

    try:
        await asyncio.gather(read(), write())
    finally:
        await reader.close()
    return observed


@pytest.fixture(scope="module")
async def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("serve")
    a_dir, b_dir, c_dir = root / "A", root / "B", root / "C"
    for folder in (a_dir, b_dir, c_dir):
        folder.mkdir()
    write_files(c_dir, {"c1.md": "# Crows\n\nCrows remember faces.\n"})
    databases = {"a": root / "a.lancedb", "b": root / "b.lancedb"}
    ingested = {
        "a": [fs_source(a_dir, poll_interval_s=NEVER)],
        "b": [fs_source(b_dir, poll_interval_s=NEVER)],
    }
    config = write_ingester_config(root / "cfg.yaml", data_dir=root / "data", databases=databases, ingested=ingested)
    base = yaml.safe_load(config.read_text())
    facts: dict[str, object] = {}
    daemon = ServeProcess(config, root)
    try:
        facts["ready"] = daemon.wait_for_message("READY=1", timeout=180)

        second = run_cli(["serve"], config=config, timeout=120)
        facts["second_serve"] = second

        # created, modified, moved, deleted
        started = time.monotonic()
        write_files(a_dir, {"new.md": "# Fresh\n\nA file created while serving.\n"})
        state = await wait_for_documents(root / "a.lancedb", "a", lambda s: uri(a_dir / "new.md") in s, 180)
        facts["created"] = (state.get(uri(a_dir / "new.md")), time.monotonic() - started)
        facts["status_serving"] = run_cli(["status", "--json"], config=config)
        facts["status_text"] = run_cli(["status"], config=config)

        started = time.monotonic()
        (a_dir / "new.md").write_text("# Fresh\n\nThe file was modified to mention lighthouses.\n")
        state = await wait_for_documents(
            root / "a.lancedb", "a",
            lambda s: "lighthouses" in " ".join(getattr(s.get(uri(a_dir / "new.md")), "chunk_texts", ())),
        )
        facts["modified"] = (state.get(uri(a_dir / "new.md")), time.monotonic() - started)

        started = time.monotonic()
        os.rename(a_dir / "new.md", a_dir / "moved.md")
        state = await wait_for_documents(
            root / "a.lancedb", "a", lambda s: uri(a_dir / "moved.md") in s and uri(a_dir / "new.md") not in s
        )
        facts["moved"] = (set(state), time.monotonic() - started)

        # a file that stays, so that a deletion taking more than its own document shows
        write_files(a_dir, {"keep.md": "# Keep\n\nThis file is never deleted.\n"})
        await wait_for_documents(root / "a.lancedb", "a", lambda s: uri(a_dir / "keep.md") in s)
        started = time.monotonic()
        (a_dir / "moved.md").unlink()
        await wait_for_documents(root / "a.lancedb", "a", lambda s: uri(a_dir / "moved.md") not in s)
        seconds = time.monotonic() - started
        finished = "SELECT COUNT(*) FROM jobs WHERE uri = ? AND op = 'delete' AND status IN ('succeeded', 'dead')"
        wait_until(lambda: queue_rows(root / "data" / "ingester.db", finished, (uri(a_dir / "moved.md"),))[0][0], 30)
        facts["deleted"] = (set(await snapshot(root / "a.lancedb", "a")), seconds)  # once its job is over

        # a bad file, then a good one: the daemon stays up and carries on
        write_files(b_dir, {"broken.pdf": b"%PDF-1.4 broken\x00\x01", "fine.md": "# Fine\n\nStill serving.\n"})
        state = await wait_for_documents(root / "b.lancedb", "b", lambda s: uri(b_dir / "fine.md") in s)
        wait_until(lambda: queue_rows(root / "data" / "ingester.db", "SELECT COUNT(*) FROM jobs WHERE status='dead'")[0][0], 30)
        facts["after_bad_file"] = (set(state), daemon.proc.poll())
        facts["dead"] = queue_rows(root / "data" / "ingester.db", "SELECT uri, last_error FROM jobs WHERE status='dead'")

        # a reload changing a section the ingester uses is refused, and serving continues
        refused = dict(base, processing={"chunk_size": 100})
        write_config(config, refused)
        daemon.signal(signal.SIGHUP)
        facts["refused_logged"] = wait_until(lambda: "reload refused" in daemon.log_text(), 60)
        write_files(a_dir, {"after-refusal.md": "# Later\n\nWritten after a refused reload.\n"})
        state = await wait_for_documents(root / "a.lancedb", "a", lambda s: uri(a_dir / "after-refusal.md") in s)
        facts["after_refusal"] = set(state)

        # a reload adding database c starts ingesting it, without a restart, though the search
        # section (read by haiku-rag only) changed with it; c's existing file is swept at once
        # although its poll interval is long
        added = dict(base, search={"limit": 11})
        added["lancedb"] = {"databases": {**base["lancedb"]["databases"], "c": str(root / "c.lancedb")}}
        added["ingester"] = dict(base["ingester"])
        added["ingester"]["databases"] = {
            **base["ingester"]["databases"],
            "c": {"sources": [fs_source(c_dir, poll_interval_s=NEVER)]},
        }
        write_config(config, added)
        daemon.signal(signal.SIGHUP)
        state = await wait_for_documents(root / "c.lancedb", "c", lambda s: uri(c_dir / "c1.md") in s)
        facts["c_existing"] = set(state)
        write_files(c_dir, {"c2.md": "# Crows again\n\nCrows use tools.\n"})
        state = await wait_for_documents(root / "c.lancedb", "c", lambda s: uri(c_dir / "c2.md") in s)
        facts["c_watched"] = set(state)
        daemon.wait_for_message("READY=1", timeout=1)
        facts["pid_unchanged"] = daemon.proc.poll() is None

        # searches while the daemon replaces one document again and again
        facts["observed"] = await search_while_replacing(root / "b.lancedb", b_dir / "versions.md")
    finally:
        facts["exit_code"] = daemon.stop(timeout=120)
        facts["status_stopped"] = run_cli(["status", "--json"], config=config)
        facts["log"] = daemon.log_text()
        facts["messages"] = list(daemon.messages)
    facts["dirs"] = {"a": a_dir, "b": b_dir, "c": c_dir}
    facts["pid"] = daemon.proc.pid
    return facts


def test_serve_sends_ready_once_databases_are_open_and_watched(served):
    assert served["ready"] is True


def test_a_second_serve_on_an_owned_database_exits_1_naming_it(served):
    second = served["second_serve"]
    assert second.returncode == 1 and "database 'a'" in second.stderr and "owned" in second.stderr


def test_a_created_file_is_ingested_without_waiting_for_a_sweep(served):
    document, _seconds = served["created"]
    assert document is not None and document.title == "Fresh"


def test_a_modified_file_keeps_its_document_id(served):
    created, _ = served["created"]
    modified, _ = served["modified"]
    assert modified.id == created.id


def test_a_moved_file_is_ingested_under_its_new_name_and_dropped_under_the_old(served):
    uris, _ = served["moved"]
    a = served["dirs"]["a"]
    assert uri(a / "moved.md") in uris and uri(a / "new.md") not in uris


def test_a_deleted_file_is_removed(served):
    uris, _ = served["deleted"]
    assert uri(served["dirs"]["a"] / "moved.md") not in uris
    assert uri(served["dirs"]["a"] / "keep.md") in uris  # and only its document


def test_each_change_is_picked_up_within_a_few_seconds(served):
    assert max(served[step][1] for step in ("modified", "moved", "deleted")) < 30


def test_a_bad_file_leaves_the_daemon_running_and_the_next_file_ingested(served):
    uris, returncode = served["after_bad_file"]
    assert returncode is None and uri(served["dirs"]["b"] / "fine.md") in uris


def test_the_bad_file_is_a_dead_job_with_its_error(served):
    [(dead_uri, error)] = served["dead"]
    assert dead_uri.endswith("/broken.pdf") and "docling could not convert" in error


def test_a_reload_changing_a_section_the_ingester_uses_is_refused_naming_it(served):
    events = [json.loads(line) for line in served["log"].splitlines() if line.startswith("{")]
    refused = [e for e in events if e["event"] == "reload refused"]
    assert len(refused) == 1 and "processing" in refused[0]["error"]


def test_a_reload_takes_a_changed_search_section_the_ingester_does_not_use(served):
    events = [json.loads(line) for line in served["log"].splitlines() if line.startswith("{")]
    taken = [e for e in events if e["event"].startswith("reload: taken as is")]
    assert [e["changed"] for e in taken] == [["search.limit"]]
    assert [e["databases"] for e in events if e["event"] == "reload applied"] == [{"c": "added"}]


def test_serving_continues_after_a_refused_reload(served):
    assert uri(served["dirs"]["a"] / "after-refusal.md") in served["after_refusal"]


def test_a_reload_adding_a_database_ingests_its_existing_files_without_waiting_for_its_poll_interval(served):
    assert uri(served["dirs"]["c"] / "c1.md") in served["c_existing"]


def test_a_database_added_by_reload_is_watched(served):
    assert uri(served["dirs"]["c"] / "c2.md") in served["c_watched"]


def test_a_reload_is_announced_with_reloading_then_ready(served):
    messages = served["messages"]
    reloading = [i for i, m in enumerate(messages) if m.startswith("RELOADING=1")]
    assert len(reloading) == 2 and all("READY=1" in messages[i + 1] for i in reloading)


def test_the_daemon_process_survived_both_reloads(served):
    assert served["pid_unchanged"] is True


def test_searches_saw_several_versions_while_the_daemon_replaced_the_document(served):
    assert len({edition for hits in served["observed"] for edition in hits}) > 2


def test_a_search_never_returns_chunks_of_two_versions_or_a_partial_document(served):
    assert all(len(hits) == 3 and len(set(hits)) == 1 for hits in served["observed"])


def test_sigterm_sends_stopping_and_exits_0(served):
    assert served["exit_code"] == 0 and "STOPPING=1" in served["messages"]


def test_every_daemon_log_line_is_json(served):
    lines = [line for line in served["log"].splitlines() if line.strip()]
    assert all(line.startswith("{") and json.loads(line) for line in lines)


def test_status_shows_the_running_serve_with_its_pid_and_each_database_document_count(served):
    report = json.loads(served["status_serving"].stdout)
    assert report["running"]["command"] == "serve" and report["running"]["pid"] == served["pid"]
    assert report["running"]["since"].endswith("Z")
    assert {d["name"]: d["documents"] for d in report["databases"]} == {"a": 1, "b": 0}
    text = served["status_text"].stdout.splitlines()
    assert f"running: serve (pid {served['pid']}, since {report['running']['since']})" in text
    assert "database a: 1 document(s)" in text


def test_status_after_serve_stopped_says_nothing_is_running(served):
    assert json.loads(served["status_stopped"].stdout)["running"] is None
