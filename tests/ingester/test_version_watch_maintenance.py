"""The ingester's own commits are not taken for a change from outside, nor the other way round (docs/ingester.md).

The version watch reconciles a database whose documents table moved past the
version the ingester knows. The ingester's store tells it of every commit it
makes under the writer lock (a job's write, a step of auto-maintenance), with
the version read fresh when the lock was taken: only commits on top of the
version known are its own. Another writer here is a second store on the same
database, as `haiku-rag tag restore --force` is in another process: the
writer lock is the same either way.
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from haiku.core.models import Chunk, Document
from haiku.core.scope import DatabaseScope
from haiku.core.store import Store
from haiku.ingester.databases import DatabaseRuntime
from haiku.ingester.versions import VersionWatch

VECTOR = [1.0] + [0.0] * 383


async def write(store: Store, n: int) -> None:
    text = f"note number {n}"
    await store.writer().documents.upsert_document(Document(uri=f"file:///{n}.md", content=text), [Chunk(content=text, order=0)],
                                [VECTOR])


async def served(make_config, tmp_path):
    config = make_config(storage={"vacuum_retention_seconds": 0, "auto_vacuum": False},
                         lancedb={"databases": {"notes": str(tmp_path / "notes.lancedb")}})
    ref = DatabaseScope.resolve(config).databases[0]
    runtime = DatabaseRuntime(name="notes", ref=ref, sources={})
    await runtime.attach(await Store.open(ref, config, create=True))  # as the ingester opens its stores
    for n in range(6):
        await write(runtime.store, n)  # its jobs' writes
    return config, ref, runtime.store, runtime


def watching(runtime: DatabaseRuntime) -> tuple[VersionWatch, list[str]]:
    reconciled: list[str] = []

    async def reconcile(runtime) -> None:
        reconciled.append(runtime.name)

    app = SimpleNamespace(databases={"notes": runtime}, reconcile=reconcile, wake=SimpleNamespace(set=lambda: None))
    return VersionWatch(app), reconciled


async def test_the_ingesters_own_writes_and_maintenance_leave_nothing_to_reconcile(make_config, tmp_path):
    _, _, store, runtime = await served(make_config, tmp_path)
    watch, _ = watching(runtime)
    try:
        assert await watch.check() == []
        report = await store.maintenance.auto_maintain()
        assert report.steps > 0
        assert await runtime.latest_version() == runtime.known_version  # every commit since was its own
        assert await watch.check() == []
    finally:
        await store.close()


async def test_a_change_from_outside_stays_to_reconcile_after_the_ingesters_maintenance(make_config, tmp_path):
    config, ref, store, runtime = await served(make_config, tmp_path)
    try:
        other = await Store.open(ref, config)  # another writer, as `haiku-rag` in another process
        await write(other, 99)
        await other.close()
        await store.maintenance.auto_maintain()
        assert await runtime.latest_version() != runtime.known_version
    finally:
        await store.close()


async def test_a_write_that_waited_for_a_restore_from_outside_leaves_the_restore_to_reconcile(make_config, tmp_path):
    config, ref, store, runtime = await served(make_config, tmp_path)
    watch, reconciled = watching(runtime)
    other = await Store.open(ref, config)
    try:
        await other.tags.create_tag("before")
        await write(store, 6)
        async with other.writer_lock("restoring tag 'before'"):
            await other.tags.restore_tag("before")  # brings back the state without 6.md
            job = asyncio.create_task(write(store, 7))  # the ingester's next job, waiting for the lock
            await asyncio.sleep(0.3)
            assert not job.done()
        await job  # written on top of the restore
        assert await watch.check() == ["notes"] and reconciled == ["notes"]
    finally:
        await other.close()
        await store.close()


async def test_a_restore_from_outside_between_two_maintenance_steps_stays_to_reconcile(make_config, tmp_path):
    config, ref, store, runtime = await served(make_config, tmp_path)
    watch, reconciled = watching(runtime)
    other = await Store.open(ref, config)
    restores: list[asyncio.Task] = []

    def restore_after_the_first_step(commits) -> None:
        if not restores:  # told under the writer lock: the restore takes it between two steps
            restores.append(asyncio.create_task(other.tags.restore_tag("before")))

    try:
        await other.tags.create_tag("before")
        await write(store, 6)
        store.tell_commits(restore_after_the_first_step)
        report = await store.maintenance.auto_maintain()
        await restores[0]
        assert report.steps > 1  # steps on top of the restore too
        assert await watch.check() == ["notes"] and reconciled == ["notes"]
    finally:
        await other.close()
        await store.close()


async def test_a_restore_from_outside_is_reconciled_from_what_it_left_though_the_handles_lag(make_config, tmp_path):
    from haiku.ingester.pipeline.process import SOURCE_ID
    from haiku.ingester.queue import IngestQueue
    from haiku.ingester.reconcile import reconcile

    config = make_config(lancedb={"databases": {"notes": str(tmp_path / "notes.lancedb")},
                                  "read_consistency_interval_seconds": 3600})  # reads follow other writers late
    ref = DatabaseScope.resolve(config).databases[0]
    runtime = DatabaseRuntime(name="notes", ref=ref, sources={})  # its source "notes", never swept here
    await runtime.attach(await Store.open(ref, config, create=True))
    queue = IngestQueue(tmp_path / "queue.db")

    async def job(n: int) -> None:  # a job's write, its sync state recorded from what the database holds
        text = f"note number {n}"
        document = Document(uri=f"file:///{n}.md", content=text, metadata={SOURCE_ID: "notes"})
        await runtime.store.writer().documents.upsert_document(document, [Chunk(content=text, order=0)], [VECTOR])
        await reconcile("notes", runtime.store, queue.sync, {"notes"})

    app = SimpleNamespace(databases={"notes": runtime}, wake=SimpleNamespace(set=lambda: None),
                          reconcile=lambda runtime: reconcile("notes", runtime.store, queue.sync, {"notes"}))
    other = await Store.open(ref, config)
    try:
        await job(1)
        await other.tags.create_tag("before")
        await job(2)
        await other.tags.restore_tag("before")  # 2.md is gone from the database
        assert await VersionWatch(app).check() == ["notes"]
        assert set(uri for _, uri in queue.sync.records("notes")) == {"file:///1.md"}
        assert await VersionWatch(app).check() == []  # its own reconcile's commits are its own
    finally:
        await other.close()
        await runtime.store.close()
        queue.close()


async def test_the_watch_does_not_look_while_the_ingesters_store_holds_its_writer_lock(make_config, tmp_path):
    _, _, store, runtime = await served(make_config, tmp_path)
    watch, reconciled = watching(runtime)
    try:
        runtime.known_version -= 1  # as if a commit had not been told yet
        async with store.writer_lock():
            assert await watch.check() == []
        assert await watch.check() == ["notes"] and reconciled == ["notes"]
    finally:
        await store.close()
