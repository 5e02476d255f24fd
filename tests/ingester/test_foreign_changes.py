"""A database changed under a running serve is reconciled without a restart (docs/ingester.md).

serve runs in a subprocess; the test process restores a tag taken before a
file was deleted, as `haiku-rag tag restore --force` does from another
process. The restored document, whose file is gone, must go again, and a
file whose document the restore removed must come back, while serve keeps
running.
"""

from __future__ import annotations

import pytest
from ingester_support import (
    ServeProcess,
    async_wait_until,
    fs_source,
    snapshot,
    wait_until,
    write_files,
    write_ingester_config,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

PICKUP_S = 90
NEVER = 10**6  # no periodic sweep during the test: only the watcher and the reconcile act


async def _uris(location) -> set[str]:
    try:
        return set(await snapshot(location, "notes"))
    except Exception:
        return set()


async def _on_store(location, act) -> None:
    """Open the database for writing in this process (not serve's), run ``act(store)``, close it."""
    from haiku.core.config import AppConfig
    from haiku.core.scope import DatabaseRef
    from haiku.core.store import Store

    store = await Store.open(DatabaseRef.configured("notes", location), AppConfig())
    try:
        await act(store)
    finally:
        await store.close()


async def test_a_tag_restored_under_serve_is_reconciled_with_the_folder_without_a_restart(tmp_path):
    folder = tmp_path / "notes"
    write_files(folder, {"keep.md": "# Keep\n\nKept all along.\n", "gone.md": "# Gone\n\nDeleted after the tag.\n"})
    location = tmp_path / "notes.lancedb"
    config = write_ingester_config(
        tmp_path / "cfg.yaml",
        data_dir=tmp_path / "data",
        databases={"notes": location},
        ingested={"notes": [fs_source(folder, id="notes", poll_interval_s=NEVER)]},
    )
    keep, gone, late = (folder / n for n in ("keep.md", "gone.md", "late.md"))
    serve = ServeProcess(config, tmp_path)
    try:
        assert serve.wait_for_message("READY=1"), serve.log_text()
        both = {keep.as_uri(), gone.as_uri()}
        assert await async_wait_until(lambda: _has(location, both), PICKUP_S), serve.log_text()
        assert wait_until(lambda: _jobs_done(serve) == 2, PICKUP_S), serve.log_text()
        await _on_store(location, lambda store: store.tags.create_tag("before"))
        gone.unlink()
        write_files(folder, {"late.md": "# Late\n\nWritten after the tag.\n"})
        after = {keep.as_uri(), late.as_uri()}
        assert await async_wait_until(lambda: _is(location, after), PICKUP_S), serve.log_text()
        assert wait_until(lambda: _jobs_done(serve) == 4, PICKUP_S), serve.log_text()  # serve is idle

        restored: set[str] = set()

        async def restore(store) -> None:  # brings gone.md back and removes late.md
            async with store.writer_lock():  # serve reconciles once it is free: read what the restore left first
                await store.tags.restore_tag("before")
                restored.update(document.uri for document in await store.reads.list_documents())

        await _on_store(location, restore)
        assert restored == both

        assert await async_wait_until(lambda: _is(location, after), PICKUP_S), serve.log_text()
        assert serve.proc.poll() is None
        assert "the database changed outside the ingester" in serve.log_text()
    finally:
        serve.stop()


def _jobs_done(serve: ServeProcess) -> int:
    return serve.log_text().count('"event": "job done"')


async def _has(location, uris: set[str]) -> bool:
    return uris <= await _uris(location)


async def _is(location, uris: set[str]) -> bool:
    return await _uris(location) == uris
