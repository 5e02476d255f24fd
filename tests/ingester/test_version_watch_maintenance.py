"""The ingester's own auto-maintenance is not taken for a change from outside (docs/ingester.md).

The version watch reconciles a database whose documents table moved past the
version the ingester's last commit left. Auto-maintenance commits there too,
in the background; those commits are the ingester's own, unless another
process committed first.
"""

from __future__ import annotations

from types import SimpleNamespace

from haiku.core.models import Chunk, Document
from haiku.core.scope import DatabaseScope
from haiku.core.store import Store
from haiku.ingester.app import DatabaseRuntime
from haiku.ingester.versions import VersionWatch, latest_version

VECTOR = [1.0] + [0.0] * 383


async def write(store: Store, n: int) -> None:
    text = f"note number {n}"
    await store.upsert_document(Document(uri=f"file:///{n}.md", content=text), [Chunk(content=text, order=0)],
                                [VECTOR])


async def served(make_config, tmp_path):
    config = make_config(storage={"vacuum_retention_seconds": 0, "auto_vacuum": False},
                         lancedb={"databases": {"notes": str(tmp_path / "notes.lancedb")},
                                  "read_consistency_interval_seconds": 0})
    ref = DatabaseScope.resolve(config).databases[0]
    store = await Store.open(ref, config, create=True)
    runtime = DatabaseRuntime(name="notes", ref=ref, sources={}, store=store)
    store.maintenance.on_step = runtime.own_maintenance_step  # as the ingester opens its stores
    for n in range(6):
        await write(store, n)
    runtime.known_version = await latest_version(runtime)  # as its last job noted
    return config, ref, store, runtime


async def test_auto_maintenance_of_the_ingesters_store_leaves_nothing_to_reconcile(make_config, tmp_path):
    _, _, store, runtime = await served(make_config, tmp_path)
    try:
        report = await store.maintenance.auto_maintain()
        assert report.steps > 0
        assert await latest_version(runtime) == runtime.known_version  # every commit since was its own
    finally:
        await store.close()


async def test_a_change_from_outside_stays_to_reconcile_after_the_ingesters_maintenance(make_config, tmp_path):
    config, ref, store, runtime = await served(make_config, tmp_path)
    try:
        other = await Store.open(ref, config)  # another writer, as `haiku-rag` in another process
        await write(other, 99)
        await other.close()
        await store.maintenance.auto_maintain()
        assert await latest_version(runtime) != runtime.known_version
    finally:
        await store.close()


async def test_the_watch_does_not_look_while_the_ingesters_store_holds_its_writer_lock(make_config, tmp_path):
    _, _, store, runtime = await served(make_config, tmp_path)
    reconciled = []

    async def reconcile(runtime) -> None:
        reconciled.append(runtime.name)

    watch = VersionWatch(SimpleNamespace(databases={"notes": runtime}, reconcile=reconcile, wake=SimpleNamespace(
        set=lambda: None)))
    try:
        runtime.known_version -= 1  # as if a commit had not been noted yet
        async with store.writer_lock():
            assert await watch.check() == []
        assert await watch.check() == ["notes"] and reconciled == ["notes"]
    finally:
        await store.close()
