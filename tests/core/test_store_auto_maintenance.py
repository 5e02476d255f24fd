"""Auto-maintenance works in bounded steps and never makes a write wait for all of it (docs/storage.md).

The step sizes are shrunk here (a "small" fragment is under 8 rows, and an
index merge reads at most 8 rows) so that a database of a few dozen rows needs as
many steps as a large one does.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from haiku.core.scope import DatabaseScope
from haiku.core.store import Store, maintenance, maintenance_steps

pytestmark = pytest.mark.slow

WRITES = 24


@pytest.fixture
def small_steps(monkeypatch):
    monkeypatch.setattr(maintenance_steps, "COMPACT_AT_FRAGMENTS", 10_000)  # writes leave every fragment to maintenance
    monkeypatch.setattr(maintenance_steps, "STEP_ROWS", 8)


async def write_notes(store, write_doc, count: int, prefix: str = "w") -> None:
    for n in range(count):
        await write_doc(store, f"file:///{prefix}{n}.md", f"{prefix} note {n}", f"second part {n}")


async def fragments(store, table: str = "chunks") -> dict[int, int]:
    dataset = await store.table(table).to_lance()
    return {f.fragment_id: f.metadata.physical_rows for f in dataset.get_fragments()}


async def fts_parts(store) -> int:
    chunks = store.table("chunks")
    (name,) = [ix.name for ix in await chunks.list_indices() if ix.columns == ["search_text"]]
    return (await chunks.index_stats(name)).num_indices


async def fts_rows_per_part(store) -> list[int]:
    """Rows in each part of the full-text index, its main part first."""
    dataset = await store.table("chunks").to_lance()
    (name,) = {ix["name"] for ix in dataset.list_indices() if ix["fields"] == ["search_text"]}
    return dataset.stats.index_stats(name)["num_indexed_rows_per_delta"]


def steps_logged(logs: list[dict]) -> list[dict]:
    return [entry for entry in logs if entry["event"] == "store.maintenance_step"]


async def until(condition, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        await asyncio.sleep(0.01)


async def test_a_write_during_auto_maintenance_waits_for_one_step_not_for_the_run(store, write_doc, small_steps):
    await write_notes(store, write_doc, WRITES)
    before = await fragments(store)
    with capture_logs() as logs:
        run = asyncio.create_task(store.maintenance.auto_maintain())
        await until(lambda: steps_logged(logs))
        await write_doc(store, "file:///during.md", "written while maintenance runs")
        steps_before_the_write_returned = len(steps_logged(logs))
        assert not run.done()  # the write got the lock between two steps, not after the run
        report = await run
    assert report.finished
    assert report.steps == len(steps_logged(logs)) > steps_before_the_write_returned
    assert {entry["kind"] for entry in steps_logged(logs)} >= {"compaction", "index deltas"}
    assert len(await fragments(store)) < len(before)
    assert await store.reads.count_chunks() == 2 * WRITES + 1
    found = await store.search("maintenance", search_type="fts", limit=3)
    assert [r.document_uri for r in found] == ["file:///during.md"]
    for n in range(WRITES):
        assert len(await store.reads.get_chunks((await store.reads.get_document_by_uri(f"file:///w{n}.md")).id)) == 2


async def bulk_with_deletions(store, fake_embed, deleted: int) -> int:
    """30 one-chunk documents in one fragment of 30 rows (its id), then ``deleted`` of them deleted."""
    from haiku.core.models import Chunk, Document

    bulk = [(Document(uri=f"file:///{n}.md", content=f"bulk text {n}"), [Chunk(content=f"bulk text {n}", order=0)],
             [fake_embed(f"bulk text {n}")]) for n in range(30)]
    await store.writer().documents.load_documents(bulk)
    await store.vacuum(retention_seconds=0)
    (large,) = [fid for fid, rows in (await fragments(store)).items() if rows == 30]
    for n in range(deleted):  # past a tenth of its rows: Lance's threshold for rewriting a fragment
        await store.writer().documents.delete_document((await store.reads.get_document_by_uri(f"file:///{n}.md")).id)
    return large


async def test_auto_maintenance_leaves_the_bulk_to_vacuum_which_still_does_the_full_job(store, write_doc, fake_embed,
                                                                                        monkeypatch):
    monkeypatch.setattr(maintenance_steps, "STEP_ROWS", 20)
    monkeypatch.setattr(maintenance_steps, "COMPACT_AT_FRAGMENTS", 10_000)
    large = await bulk_with_deletions(store, fake_embed, 5)
    await write_notes(store, write_doc, 6)
    assert len(await fragments(store)) == 7
    report = await store.maintenance.auto_maintain()
    after = await fragments(store)
    assert report.finished and after[large] == 30  # not rewritten, its deleted rows left for vacuum
    assert len(after) == 2  # the small fragments merged into one
    assert await fts_parts(store) == 2  # the main index as it was, the writes' deltas merged into one beside it
    vacuumed = await store.vacuum(retention_seconds=0)
    assert vacuumed is not None and vacuumed.versions_removed > 0
    assert list((await fragments(store)).values()) == [37]  # everything rewritten into one, deleted rows gone
    assert await fts_parts(store) == 1
    assert await store.reads.count_chunks() == 37


async def test_a_compacting_write_leaves_a_large_fragment_alone_even_with_deleted_rows(store, write_doc, fake_embed,
                                                                                      monkeypatch):
    monkeypatch.setattr(maintenance_steps, "STEP_ROWS", 20)
    monkeypatch.setattr(maintenance_steps, "COMPACT_AT_FRAGMENTS", 4)
    large = await bulk_with_deletions(store, fake_embed, 6)
    await write_notes(store, write_doc, 6)  # crosses the compaction after writes
    after = await fragments(store)
    assert after[large] == 30 and len([rows for rows in after.values() if rows < 20]) < 4
    assert await store.reads.count_chunks() == 24 + 12


async def test_closing_maintains_in_bounded_steps_and_stops_a_background_run(db_config, write_doc, small_steps,
                                                                            monkeypatch):
    config = db_config("wiki")
    ref = DatabaseScope.resolve(config).databases[0]
    store = await Store.open(ref, config, create=True)
    await write_notes(store, write_doc, WRITES)
    parts_before = await fts_rows_per_part(store)
    monkeypatch.setattr(maintenance, "AUTO_MAINTENANCE_INTERVAL_S", 0.0)
    monkeypatch.setattr(maintenance, "CLOSE_MAINTENANCE_BUDGET_S", 600.0)  # a loaded machine's steps are slow
    with capture_logs() as logs:
        await write_doc(store, "file:///last.md", "the write that starts a background run")
        background = store.maintenance.auto_task
        assert background is not None
        await until(lambda: steps_logged(logs))
        await store.close()
    assert background.done()
    runs = [entry for entry in logs if entry["event"] == "store.auto_maintained"]
    assert [run["finished"] for run in runs] == [False, True]  # stopped after its step; the close run finished
    monkeypatch.setattr(maintenance, "AUTO_MAINTENANCE_INTERVAL_S", 3600.0)
    reopened = await Store.open(ref, config)
    try:
        assert await reopened.reads.count_chunks() == 2 * WRITES + 1
        parts = await fts_rows_per_part(reopened)
        assert parts[0] == parts_before[0]  # the main index never rewritten
        assert 1 < len(parts) < len(parts_before)  # the deltas writes left merged
        await write_doc(reopened, "file:///after.md", "one more")
        monkeypatch.setattr(maintenance, "CLOSE_MAINTENANCE_BUDGET_S", 0.0)
        with capture_logs() as logs:
            await reopened.close()
        (run,) = [entry for entry in logs if entry["event"] == "store.auto_maintained"]
        assert run["steps"] == 0 and run["finished"] is False  # past its budget, no step starts
    finally:
        await reopened.close()


_CHILD = textwrap.dedent(
    """
    import asyncio, json, sys

    import structlog

    from haiku.core.config import config_from_dict
    from haiku.core.scope import DatabaseScope
    from haiku.core.store import Store, indexes, maintenance, maintenance_steps

    maintenance_steps.STEP_ROWS = 4
    maintenance.STEP_PAUSE_S = 0.0

    def show(logger, method, event):
        if event["event"] == "store.maintenance_step":
            print(event["kind"], flush=True)
        raise structlog.DropEvent

    structlog.configure(processors=[show])

    async def main():
        config = config_from_dict(json.loads(sys.argv[1]))
        store = await Store.open(DatabaseScope.resolve(config).databases[0], config)
        await store.maintenance.auto_maintain()
        print("finished", flush=True)

    asyncio.run(main())
    """
)


def test_a_process_killed_during_auto_maintenance_leaves_a_readable_database(db_config, write_doc, tmp_path: Path,
                                                                            small_steps):
    # No auto-maintenance on close: every fragment, delta and version is left for the child's run.
    config = db_config("wiki", storage={"vacuum_retention_seconds": 0, "auto_vacuum": False})
    ref = DatabaseScope.resolve(config).databases[0]

    async def build() -> None:
        store = await Store.open(ref, config, create=True)
        await write_notes(store, write_doc, WRITES)
        await store.close()

    asyncio.run(build())
    data = config.model_dump(mode="json")
    child = subprocess.Popen([sys.executable, "-c", _CHILD, json.dumps(data)], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "HF_HUB_OFFLINE": "1"})
    seen = []
    assert child.stdout is not None
    for line in child.stdout:
        seen.append(line.strip())
        if len(seen) == 3:
            child.send_signal(signal.SIGKILL)
            break
    child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL and "finished" not in seen

    async def check() -> None:
        store = await Store.open(ref, config)
        try:
            assert await store.reads.count_chunks() == 2 * WRITES
            for n in range(WRITES):
                document = await store.reads.get_document_by_uri(f"file:///w{n}.md")
                assert document is not None and len(await store.reads.get_chunks(document.id)) == 2
            assert len(await store.search("note", search_type="fts", limit=100)) == WRITES
            report = await store.maintenance.auto_maintain()  # the next run takes up what was left
            assert report.finished
            assert len(await store.search("note", search_type="fts", limit=100)) == WRITES
        finally:
            await store.close()

    asyncio.run(check())
