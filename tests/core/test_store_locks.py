"""The writer lock and the ownership lock (docs/storage.md, docs/ingester.md)."""

from __future__ import annotations

import ast
import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import haiku.core
from haiku.core.errors import DatabaseLockedError
from haiku.core.scope import DatabaseRef, DatabaseScope
from haiku.core.store import OwnershipLock, Store, WriterLock
from haiku.core.store.locks import location_key

HOLDER = textwrap.dedent(
    """
    import asyncio, json, sys
    from haiku.core.config import config_from_dict
    from haiku.core.scope import DatabaseScope
    from haiku.core.store import Store

    async def main():
        config = config_from_dict(json.loads(sys.argv[1]))
        ref = DatabaseScope.resolve(config, database_name=sys.argv[2]).databases[0]
        store = await Store.open(ref, config)
        async with store.writer_lock("holding for a test"):
            print("locked", flush=True)
            await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        await store.close()

    asyncio.run(main())
    """
)


@pytest.fixture
def papers(db_config, tmp_path):
    data = {
        "storage": {"data_dir": str(tmp_path / "data"), "writer_lock_timeout_s": 0.5},
        "lancedb": {"databases": {"papers": str(tmp_path / "papers.lancedb")}},
    }
    config = db_config(**json.loads(json.dumps(data)))
    return data, config, DatabaseScope.resolve(config).databases[0]


async def test_a_second_process_cannot_write_while_the_first_holds_the_writer_lock(papers):
    data, config, ref = papers
    await (await Store.open(ref, config, create=True)).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, json.dumps(data), "papers"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = await asyncio.to_thread(holder.stdout.readline)
        assert line.strip() == "locked"
        store = await Store.open(ref, config)
        try:
            with pytest.raises(DatabaseLockedError) as caught:
                await store.tags.create_tag("r1")
            assert "'papers'" in str(caught.value) and caught.value.database == "papers"
            holder.stdin.write("\n")
            holder.stdin.flush()
            await asyncio.to_thread(holder.wait, 30)
            info = await store.tags.create_tag("r1")  # free again once the holder let go
            assert info.complete
        finally:
            await store.close()
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.wait()


async def test_two_stores_in_one_process_take_turns_on_the_writer_lock(papers, write_doc):
    _, config, ref = papers
    first = await Store.open(ref, config, create=True)
    second = await Store.open(ref, config)
    try:
        async with first.writer_lock():
            with pytest.raises(DatabaseLockedError, match="'papers'"):
                await write_doc(second, "file:///a.md", "words")
        await write_doc(second, "file:///a.md", "words")
        assert await first.reads.count_documents() == 1
    finally:
        await second.close()
        await first.close()


async def test_the_writer_lock_is_reentrant_for_the_task_holding_it(papers, write_doc):
    _, config, ref = papers
    store = await Store.open(ref, config, create=True)
    try:
        async with store.writer_lock():
            await write_doc(store, "file:///a.md", "words")
            await store.tags.create_tag("inside")
        assert [t.name for t in await store.tags.list_tags()] == ["inside"]
    finally:
        await store.close()


async def test_writes_from_concurrent_tasks_on_one_store_serialise(papers, write_doc):
    _, config, ref = papers
    # The fixture's 0.5 s budget is for the failure tests; four queued writes on a loaded
    # machine can take longer than that in all, and waiting is what this test is about.
    config = config.model_copy(update={"storage": config.storage.model_copy(update={"writer_lock_timeout_s": 60.0})})
    store = await Store.open(ref, config, create=True)
    try:
        await asyncio.gather(*(write_doc(store, f"file:///{i}.md", f"text {i}") for i in range(4)))
        assert await store.reads.count_documents() == 4
    finally:
        await store.close()


async def test_a_second_ownership_lock_on_a_database_fails_naming_it(tmp_path):
    ref = DatabaseRef.configured("papers", tmp_path / "papers.lancedb")
    first = OwnershipLock(ref, "ingester")
    await first.acquire()
    try:
        with pytest.raises(DatabaseLockedError, match="'papers'") as caught:
            await OwnershipLock(ref, "ingester").acquire()
        assert str(tmp_path) not in str(caught.value)
    finally:
        first.release()
    async with OwnershipLock(ref, "ingester") as again:
        assert again.held


async def test_an_ownership_lock_does_not_block_the_writer_lock(papers, write_doc):
    _, config, ref = papers
    store = await Store.open(ref, config, create=True)
    try:
        async with OwnershipLock(ref, "ingester"):
            with pytest.raises(DatabaseLockedError):  # it is held: a second owner is refused
                await OwnershipLock(ref, "ingester").acquire()
            await write_doc(store, "file:///a.md", "words")
            assert await store.reads.count_documents() == 1
    finally:
        await store.close()


async def test_init_while_the_writer_lock_is_held_raises_database_locked_naming_the_database(papers):
    from haiku.core.store import WriterLock

    _, config, ref = papers
    holder = WriterLock(ref, timeout_s=1.0)
    async with holder.hold("a test holding the lock"):
        with pytest.raises(DatabaseLockedError) as caught:
            await Store.open(ref, config, create=True)
    assert str(caught.value).startswith("database 'papers'")
    store = await Store.open(ref, config, create=True)
    assert store.created
    await store.close()


async def _held_here(lock: WriterLock) -> bool:
    return lock.held_by_current_task()


async def test_held_by_current_task_is_true_only_in_the_holding_task_while_it_holds(papers):
    _, _, ref = papers
    lock = WriterLock(ref, 0.5)
    assert not lock.held_by_current_task()
    async with lock.hold("a test"):
        assert lock.held_by_current_task()
        assert not await asyncio.create_task(_held_here(lock))
        async with lock.hold("a nested write"):
            assert lock.held_by_current_task()
    assert not lock.held_by_current_task()


def test_a_writer_lock_key_is_its_database_location_key(papers, tmp_path):
    _, _, ref = papers
    assert WriterLock(ref, 0.5).key == location_key(ref) == str((tmp_path / "papers.lancedb").resolve())


def test_no_module_outside_locks_reads_a_private_field_of_a_lock():
    """Stores use the locks' public face (held, held_by_current_task, key, hold)."""
    source_root = Path(haiku.core.__file__).parents[3]
    offenders = []
    for path in source_root.parent.glob("*/src/**/*.py"):
        if path.name == "locks.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and isinstance(node.value, ast.Attribute)
                and node.value.attr.lstrip("_").endswith("lock")
                and not node.attr.startswith("__")
            ):
                offenders.append(f"{path.name}:{node.lineno} .{node.value.attr}.{node.attr}")
    assert offenders == []
