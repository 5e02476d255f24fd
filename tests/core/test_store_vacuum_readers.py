"""A vacuum with a short retention under an open reader or writer (docs/storage.md, "Vacuum").

A store's table handles stay at the version they last read (for
``lancedb.read_consistency_interval_seconds``, 30 s by default). A vacuum with
``retention_seconds=0`` run by another store meanwhile removes that version's
files, so the next read finds them gone. That is not damage: the read moves to
the latest version and succeeds, logging at debug level only. A database whose
files are really gone still fails, named, as damaged.
"""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from haiku.core.errors import SourceUnavailableError
from haiku.core.scope import DatabaseScope
from haiku.core.store import Store


@pytest.fixture
def alpha(db_config):
    """The database alpha, with the default consistency interval: handles are not refreshed per read."""
    config = db_config("alpha", lancedb={"read_consistency_interval_seconds": 30}, storage={"auto_vacuum": False})
    return config, DatabaseScope.resolve(config).databases[0]


async def _write(store, write_doc, first: int, last: int) -> None:
    for n in range(first, last):
        await write_doc(store, f"file:///{n}.md", f"otters swim in river {n}", f"badgers dig burrow {n}")


@pytest.mark.parametrize("read_only", [True, False], ids=["a read-only reader", "another writable store"])
async def test_a_read_at_a_version_a_vacuum_removed_reads_the_latest_without_calling_it_damaged(
    alpha, write_doc, fake_embed, read_only
):
    config, ref = alpha
    writer = await Store.open(ref, config, create=True)
    other = None
    try:
        await _write(writer, write_doc, 0, 5)
        other = await Store.open(ref, config, read_only=read_only)
        query = fake_embed("otters swim")
        assert len(await other.search("otters", query_vector=query, limit=20)) == 10  # its handles: this version
        await _write(writer, write_doc, 5, 8)
        report = await writer.vacuum(retention_seconds=0)
        assert report is not None and report.versions_removed > 0
        with capture_logs() as logs:
            # The latest version: 8 documents of 2 chunks, one of them with "otters" in it.
            for search_type, expected in (("hybrid", 16), ("vector", 16), ("fts", 8)):
                found = await other.search("otters", query_vector=query, search_type=search_type, limit=20)
                assert len(found) == expected, search_type
        retried = [e for e in logs if e["event"] == "store.read_retried_at_latest"]
        assert retried and {e["log_level"] for e in retried} == {"debug"}
        assert not [e for e in logs if e["event"] == "store.read_failed" or e["log_level"] != "debug"]
    finally:
        if other is not None:
            await other.close()
        await writer.close()


async def test_a_database_whose_chunk_files_are_gone_still_fails_a_search_as_damaged(alpha, write_doc, fake_embed):
    config, ref = alpha
    writer = await Store.open(ref, config, create=True)
    await _write(writer, write_doc, 0, 3)
    await writer.close()
    for file in (ref.location / "chunks.lance" / "data").glob("*.lance"):
        file.unlink()
    store = await Store.open(ref, config, read_only=True)
    try:
        with pytest.raises(SourceUnavailableError) as caught:
            await store.search("otters", query_vector=fake_embed("otters"), limit=5)
        assert str(caught.value).startswith("database 'alpha' could not be read: it is damaged or unreachable")
        assert str(ref.location) not in str(caught.value)
    finally:
        await store.close()


async def test_a_search_whose_opened_version_a_vacuum_removed_moves_to_the_latest_instead_of_failing(
    alpha, write_doc, fake_embed
):
    # A one-shot search beside `vacuum --retention-seconds 0`: the store opened at a version
    # (no search ran on it yet), which the vacuum removed before the search pinned it, so
    # LanceDB refuses to open it ("Version N no longer exists"), a ValueError.
    config, ref = alpha
    writer = await Store.open(ref, config, create=True)
    reader = None
    try:
        await _write(writer, write_doc, 0, 3)
        reader = await Store.open(ref, config, read_only=True)
        await _write(writer, write_doc, 3, 5)
        report = await writer.vacuum(retention_seconds=0)
        assert report is not None and report.versions_removed > 0
        with capture_logs() as logs:
            found = await reader.search("otters", query_vector=fake_embed("otters swim"), search_type="hybrid", limit=20)
        assert len(found) == 10  # the latest version: 5 documents of 2 chunks
        retried = [e for e in logs if e["event"] == "store.read_retried_at_latest"]
        assert retried and retried[0]["reason"] == "its version is gone"
    finally:
        if reader is not None:
            await reader.close()
        await writer.close()
