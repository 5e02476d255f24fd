"""A source root swapped or moved under serve is followed (docs/ingester.md, "Watching").

``mv docs docs.old && mv docs.new docs`` is how deployments publish a folder: the
watch must move to the new folder, nothing may be deleted while the root's name
holds no folder, and a file that comes back with the same bytes keeps its
document id (no re-embedding). A real serve, real watchdog events.
"""

from __future__ import annotations

import json
import os
import shutil
import time

import pytest
from ingester_support import ServeProcess, fs_source, run_cli, snapshot, write_files, write_ingester_config

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

PICKUP_S = 60
NEVER = 10**6  # no periodic sweep: whatever is picked up is the watch's or the re-arm's doing
FILES = {
    "a.md": "# Alpha\n\nAlpha talks about anchors.\n",
    "b.md": "# Beta\n\nBeta talks about bridges.\n",
    "pkg/__init__.py": "",  # an empty file: skipped, and counted in the sweep's log
}


def uri(path) -> str:
    return path.as_uri()


async def wait_for(location, predicate, timeout=PICKUP_S):
    deadline = time.monotonic() + timeout
    while True:
        try:
            state = await snapshot(location, "docs")
        except Exception:
            state = None
        if (state is not None and predicate(state)) or time.monotonic() > deadline:
            return state
        time.sleep(0.3)


def log_events(text: str) -> list[dict]:
    events = []
    for line in text.splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    return events


@pytest.fixture(scope="module")
async def swapped(tmp_path_factory):
    base = tmp_path_factory.mktemp("swap").resolve()
    docs, old, new = base / "docs", base / "docs.old", base / "docs.new"
    write_files(docs, FILES)
    location = base / "docs.lancedb"
    config = write_ingester_config(
        base / "cfg.yaml",
        data_dir=base / "data",
        databases={"docs": location},
        ingested={"docs": [fs_source(docs, id="docs", poll_interval_s=NEVER)]},
    )
    facts: dict = {}
    daemon = ServeProcess(config, base)
    try:
        assert daemon.wait_for_message("READY=1", timeout=180)
        before = await wait_for(location, lambda s: {uri(docs / "a.md"), uri(docs / "b.md")} <= set(s))
        facts["before"] = before

        # The root moves away; its name holds no folder for longer than the watch's debounce.
        write_files(new, {**FILES, "c.md": "# Gamma\n\nGamma talks about canals.\n"})
        os.rename(docs, old)
        (old / "b.md").write_text("# Beta\n\nAn edit in the folder moved away, while its name is empty.\n")
        time.sleep(2.5)
        facts["while_vanished"] = await snapshot(location, "docs")
        os.rename(new, docs)
        facts["after"] = await wait_for(location, lambda s: uri(docs / "c.md") in s)
        (old / "b.md").write_text("# Beta\n\nAn edit in the folder moved away.\n")
        (old / "a.md").unlink()

        # The new root is watched: an edit there is seen without a sweep.
        (docs / "a.md").write_text("# Alpha\n\nAlpha now talks about albatrosses.\n")
        facts["edited"] = await wait_for(
            location, lambda s: "albatrosses" in " ".join(getattr(s.get(uri(docs / "a.md")), "chunk_texts", ()))
        )

        # A swap in one go (the name never empty for long): followed too.
        newer = base / "docs.newer"
        shutil.copytree(docs, newer)
        write_files(newer, {"d.md": "# Delta\n\nDelta talks about dunes.\n"})
        os.rename(docs, base / "docs.older")
        os.rename(newer, docs)
        facts["swapped_again"] = await wait_for(location, lambda s: uri(docs / "d.md") in s)

        # A file emptied under serve: its document goes, its job is not dead.
        (docs / "b.md").write_bytes(b"")
        facts["emptied"] = await wait_for(location, lambda s: uri(docs / "b.md") not in s)
        facts["status"] = json.loads(run_cli(["status", "--json"], config=config).stdout)
    finally:
        facts["exit_code"] = daemon.stop(timeout=120)
        facts["log"] = log_events(daemon.log_text())
    facts["docs"] = docs
    return facts


def test_an_edit_in_the_folder_moved_away_deletes_nothing_while_the_roots_name_holds_no_folder(swapped):
    assert set(swapped["while_vanished"]) == set(swapped["before"])


def test_files_of_the_new_root_are_ingested_without_a_periodic_sweep(swapped):
    assert uri(swapped["docs"] / "c.md") in swapped["after"]


def test_a_file_back_with_the_same_bytes_keeps_its_document_id_and_chunks(swapped):
    before, after, docs = swapped["before"], swapped["after"], swapped["docs"]
    for name in ("a.md", "b.md"):
        assert (after[uri(docs / name)].id, after[uri(docs / name)].chunk_ids) == (
            before[uri(docs / name)].id, before[uri(docs / name)].chunk_ids,
        )


def test_an_edit_in_the_new_root_is_seen_by_the_watch_and_keeps_the_id(swapped):
    a = uri(swapped["docs"] / "a.md")
    assert swapped["edited"][a].id == swapped["before"][a].id
    assert "albatrosses" in " ".join(swapped["edited"][a].chunk_texts)


def test_edits_in_the_folder_moved_away_change_nothing(swapped):
    b = uri(swapped["docs"] / "b.md")
    assert "moved away" not in " ".join(swapped["edited"][b].chunk_texts)
    assert swapped["edited"][b].id == swapped["before"][b].id


def test_a_root_swapped_in_one_go_is_followed_too(swapped):
    docs = swapped["docs"]
    assert uri(docs / "d.md") in swapped["swapped_again"]
    assert swapped["swapped_again"][uri(docs / "c.md")].id == swapped["after"][uri(docs / "c.md")].id


def test_the_daemon_warns_naming_the_source_when_its_root_vanishes_or_is_replaced(swapped):
    warnings = {e["event"] for e in swapped["log"] if e.get("level") == "warning" and e.get("source") == "docs"}
    assert any("root vanished" in w for w in warnings) and any("replaced or moved" in w for w in warnings)


def test_no_file_that_came_back_is_embedded_again(swapped):
    docs = swapped["docs"]
    back = [
        e for e in swapped["log"]
        if e.get("event") == "job done" and e.get("uri") in (uri(docs / "a.md"), uri(docs / "b.md"))
    ]
    # a.md and b.md: written once at start, then only their revision rolled forward (or unchanged),
    # until a.md was edited (written) and b.md emptied (skipped).
    assert [e["action"] for e in back if e["uri"] == uri(docs / "b.md")][:1] == ["written"]
    assert "written" not in [e["action"] for e in back if e["uri"] == uri(docs / "b.md")][1:]


def test_a_file_emptied_under_serve_loses_its_document_and_is_not_dead(swapped):
    assert uri(swapped["docs"] / "b.md") not in swapped["emptied"]
    assert swapped["status"]["databases"][0]["sources"][0]["dead"] == 0


def test_the_sweep_log_counts_the_files_it_skipped_by_reason(swapped):
    sweeps = [e for e in swapped["log"] if e.get("event") == "sweep done" and e.get("source") == "docs"]
    assert sweeps and sweeps[0]["skipped_by_reason"] == {"empty": {"files": 1}}


def test_serve_stops_cleanly(swapped):
    assert swapped["exit_code"] == 0
