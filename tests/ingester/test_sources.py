"""Folder sources and sweeps (docs/ingester.md): patterns, revisions, uris, the sweep's decisions."""

from __future__ import annotations

import os
import time

import pytest

from haiku.core.config import FsSourceConfig, RetryConfig
from haiku.ingester.errors import EmptyListingError, SweepError
from haiku.ingester.queue import IngestQueue, SyncUpdate
from haiku.ingester.sources.fs import FolderSource
from haiku.ingester.sources.sweep import sweep_source


def make_source(root, **options) -> FolderSource:
    return FolderSource("db", FsSourceConfig(root=root, **options), RetryConfig())


def listed_names(source: FolderSource) -> set[str]:
    return {source.relative(entry.path) for entry in source.list_files().values()}


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "docs"
    for rel in [
        "a.md", "b.txt", "c.html", "d.docx", "e.pdf", "f.PDF", "g.png", "g.xyz", "sub/deep/h.markdown",
        ".hidden.md", "sub/.secret.md", ".git/config.md", "~$lock.docx", "draft.tmp", "x.md.swp",
    ]:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("text")
    return root


def test_default_patterns_take_supported_extensions_at_any_depth_and_skip_hidden_and_temporary_files(tree):
    assert listed_names(make_source(tree)) == {
        "a.md", "b.txt", "c.html", "d.docx", "e.pdf", "f.PDF", "g.png", "sub/deep/h.markdown",
    }


def test_include_and_ignore_patterns_are_relative_to_the_root(tree):
    source = make_source(tree, include_patterns=["sub/*"], ignore_patterns=["sub/deep/*", "**/.*"])
    assert listed_names(source) == set()
    assert listed_names(make_source(tree, include_patterns=["*.txt", "sub/**"])) == {"b.txt", "sub/deep/h.markdown"}


def test_revision_is_mtime_ns_and_size(tree):
    st = os.stat(tree / "a.md")
    entry = make_source(tree).list_files()[(tree / "a.md").resolve().as_uri()]
    assert entry.revision == f"{st.st_mtime_ns}-{st.st_size}"


def test_the_document_uri_is_the_files_file_uri(tree):
    assert (tree / "sub/deep/h.markdown").resolve().as_uri() in make_source(tree).list_files()


def test_the_default_source_id_is_fs_and_the_resolved_root(tree):
    assert make_source(tree).id == f"fs:{tree.resolve()}"


def test_a_symlink_loop_and_a_fifo_under_matching_names_are_listed_so_they_can_fail_loudly(tmp_path):
    root = tmp_path / "r"
    root.mkdir()
    os.symlink(root / "loop2.md", root / "loop1.md")
    os.symlink(root / "loop1.md", root / "loop2.md")
    os.mkfifo(root / "pipe.md")
    assert listed_names(make_source(root)) == {"loop1.md", "loop2.md", "pipe.md"}


def test_a_symlinked_folder_is_not_followed(tmp_path):
    root = tmp_path / "r"
    (root / "real").mkdir(parents=True)
    (root / "real" / "x.md").write_text("x")
    os.symlink(root, root / "real" / "back")
    assert listed_names(make_source(root)) == {"real/x.md"}


# --- sweeps ---------------------------------------------------------------------------------


@pytest.fixture
def queue(tmp_path):
    q = IngestQueue(tmp_path / "ingester.db")
    yield q
    q.close()


async def test_a_sweep_enqueues_new_files_and_skips_unchanged_ones(tree, queue):
    source = make_source(tree)
    known = (tree / "a.md").resolve().as_uri()
    revision = source.list_files()[known].revision
    queue.sync.put_many("db", [(source.id, known, SyncUpdate(revision, "h", "doc"))])
    result = await sweep_source(source, queue, process_started_at=time.time())
    assert (result.listed, result.enqueued) == (8, 7)


async def test_a_sweep_deletes_known_files_that_are_gone(tree, queue):
    source = make_source(tree)
    gone = (tree / "gone.md").resolve().as_uri()
    queue.sync.put_many("db", [(source.id, gone, SyncUpdate("1-1", "h", "doc"))])
    await sweep_source(source, queue, process_started_at=time.time())
    [job] = [j for j in queue.jobs.claim(["db"], limit=100, lease_ttl_s=30) if j.uri == gone]
    assert job.op == "delete"


async def test_a_sweep_keeps_known_files_that_are_gone_when_delete_orphans_is_off(tree, queue):
    source = make_source(tree, delete_orphans=False)
    gone = (tree / "gone.md").resolve().as_uri()
    queue.sync.put_many("db", [(source.id, gone, SyncUpdate("1-1", "h", "doc"))])
    result = await sweep_source(source, queue, process_started_at=time.time())
    assert result.deletes == 0


async def test_an_empty_listing_with_known_documents_deletes_nothing(tmp_path, queue):
    root = tmp_path / "empty"
    root.mkdir()
    source = make_source(root)
    queue.sync.put_many("db", [(source.id, (root / "x.md").as_uri(), SyncUpdate("1-1", "h", "doc"))])
    with pytest.raises(EmptyListingError):
        await sweep_source(source, queue, process_started_at=time.time())
    assert queue.jobs.live_count(["db"]) == 0


async def test_an_empty_listing_refusal_names_the_allow_empty_setting(tmp_path, queue):
    root = tmp_path / "empty"
    root.mkdir()
    source = make_source(root)
    queue.sync.put_many("db", [(source.id, (root / "x.md").as_uri(), SyncUpdate("1-1", "h", "doc"))])
    with pytest.raises(EmptyListingError, match="set allow_empty: true on the source"):
        await sweep_source(source, queue, process_started_at=time.time())


async def test_a_folder_allowed_to_be_empty_deletes_what_came_from_it(tmp_path, queue):
    root = tmp_path / "emptied"
    root.mkdir()
    source = make_source(root, allow_empty=True)
    uri = (root / "x.md").as_uri()
    queue.sync.put_many("db", [(source.id, uri, SyncUpdate("1-1", "h", "doc"))])
    result = await sweep_source(source, queue, process_started_at=time.time())
    [job] = queue.jobs.claim(["db"], limit=5, lease_ttl_s=30)
    assert (result.deletes, job.op, job.uri) == (1, "delete", uri)


async def test_a_missing_root_fails_the_sweep_naming_database_and_source(tmp_path, queue):
    source = make_source(tmp_path / "nowhere", id="notes")
    with pytest.raises(SweepError, match=r"notes.*'db'.*does not exist"):
        await sweep_source(source, queue, process_started_at=time.time())


async def test_a_file_dead_at_its_revision_is_not_enqueued_again_until_it_changes(tmp_path, queue):
    root = tmp_path / "r"
    root.mkdir()
    (root / "bad.md").write_text("x")
    source = make_source(root)
    started = time.time()
    await sweep_source(source, queue, process_started_at=started)
    [job] = queue.jobs.claim(["db"], limit=1, lease_ttl_s=30)
    queue.jobs.fail(job, "broken", retry_delay_s=None)
    again = await sweep_source(source, queue, process_started_at=started)
    os.utime(root / "bad.md", ns=(time.time_ns(), time.time_ns() + 10**9))
    changed = await sweep_source(source, queue, process_started_at=started)
    assert (again.enqueued, again.skipped_dead, changed.enqueued) == (0, 1, 1)


async def test_a_new_process_retries_files_that_went_dead_before_it_started(tmp_path, queue):
    root = tmp_path / "r"
    root.mkdir()
    (root / "bad.md").write_text("x")
    source = make_source(root)
    await sweep_source(source, queue, process_started_at=time.time())
    [job] = queue.jobs.claim(["db"], limit=1, lease_ttl_s=30)
    queue.jobs.fail(job, "broken", retry_delay_s=None)
    result = await sweep_source(source, queue, process_started_at=time.time() + 1)
    assert result.enqueued == 1
