"""Watching a folder with real watchdog events (docs/ingester.md)."""

from __future__ import annotations

import asyncio
import os
import shutil

import pytest

from haiku.core.config import FsSourceConfig, RetryConfig
from haiku.ingester.sources.fs import FolderSource
from haiku.ingester.sources.watching import Change, FolderWatcher


class Collector:
    def __init__(self) -> None:
        self.changes: list[Change] = []

    def __call__(self, changes: list[Change]) -> None:
        self.changes.extend(changes)

    def kinds_for(self, path) -> list[str]:
        return [c.kind for c in self.changes if c.path == path]

    async def wait(self, predicate, timeout: float = 10.0) -> bool:
        for _ in range(int(timeout / 0.05)):
            if predicate():
                return True
            await asyncio.sleep(0.05)
        return predicate()


@pytest.fixture
async def watched(tmp_path):
    root = (tmp_path / "root").resolve()
    root.mkdir()
    source = FolderSource("db", FsSourceConfig(root=root), RetryConfig())
    collector = Collector()
    watcher = FolderWatcher(source, collector, loop=asyncio.get_running_loop(), debounce_s=0.1)
    await asyncio.to_thread(watcher.start)
    yield root, collector
    await asyncio.to_thread(watcher.stop)


async def test_a_created_file_becomes_an_upsert(watched):
    root, seen = watched
    (root / "new.md").write_text("hello")
    assert await seen.wait(lambda: "upsert" in seen.kinds_for(root / "new.md"))


async def test_a_modified_file_becomes_an_upsert_with_its_new_revision(watched):
    root, seen = watched
    path = root / "doc.md"
    path.write_text("one")
    await seen.wait(lambda: seen.kinds_for(path))
    first = [c.revision for c in seen.changes if c.path == path][-1]
    seen.changes.clear()
    path.write_text("two, longer")
    assert await seen.wait(lambda: any(c.revision != first for c in seen.changes if c.path == path))


async def test_a_deleted_file_becomes_a_delete(watched):
    root, seen = watched
    path = root / "doc.md"
    path.write_text("one")
    await seen.wait(lambda: seen.kinds_for(path))
    path.unlink()
    assert await seen.wait(lambda: "delete" in seen.kinds_for(path))


async def test_an_atomic_save_through_a_temporary_file_is_one_upsert_of_the_target(watched):
    root, seen = watched
    (root / "doc.md.tmp").write_text("saved atomically")
    os.replace(root / "doc.md.tmp", root / "doc.md")
    assert await seen.wait(lambda: "upsert" in seen.kinds_for(root / "doc.md"))
    assert seen.kinds_for(root / "doc.md.tmp") == []


async def test_a_moved_file_deletes_the_old_uri_and_upserts_the_new(watched):
    root, seen = watched
    (root / "old.md").write_text("content")
    await seen.wait(lambda: seen.kinds_for(root / "old.md"))
    seen.changes.clear()
    os.rename(root / "old.md", root / "new.md")
    assert await seen.wait(
        lambda: "delete" in seen.kinds_for(root / "old.md") and "upsert" in seen.kinds_for(root / "new.md")
    )


async def test_files_in_a_brand_new_subfolder_are_upserted(watched, tmp_path):
    root, seen = watched
    outside = tmp_path / "elsewhere" / "folder"
    (outside / "inner").mkdir(parents=True)
    (outside / "inner" / "moved-in.md").write_text("a")
    shutil.move(str(outside), str(root / "folder"))
    (root / "made" / "here").mkdir(parents=True)
    (root / "made" / "here" / "quick.md").write_text("b")
    assert await seen.wait(
        lambda: "upsert" in seen.kinds_for(root / "folder" / "inner" / "moved-in.md")
        and "upsert" in seen.kinds_for(root / "made" / "here" / "quick.md")
    )


async def test_a_removed_folder_deletes_what_was_under_it(watched):
    root, seen = watched
    (root / "gone").mkdir()
    (root / "gone" / "a.md").write_text("a")
    await seen.wait(lambda: seen.kinds_for(root / "gone" / "a.md"))
    shutil.rmtree(root / "gone")
    assert await seen.wait(
        lambda: "delete" in seen.kinds_for(root / "gone" / "a.md") or "delete_tree" in seen.kinds_for(root / "gone")
    )


async def test_ignored_files_make_no_changes(watched):
    root, seen = watched
    (root / ".hidden.md").write_text("x")
    (root / "notes.swp").write_text("x")
    (root / "visible.md").write_text("x")
    await seen.wait(lambda: seen.kinds_for(root / "visible.md"))
    assert {c.path.name for c in seen.changes} == {"visible.md"}
