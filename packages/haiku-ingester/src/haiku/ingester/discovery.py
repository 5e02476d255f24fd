"""Discovery under ``serve``: watchers and periodic sweeps for each source (docs/ingester.md)."""

from __future__ import annotations

import asyncio
import random

from haiku.ingester.app import IngesterApp
from haiku.ingester.databases import DatabaseRuntime
from haiku.ingester.errors import SweepError
from haiku.ingester.logs import get_logger
from haiku.ingester.sources.fs import FolderSource
from haiku.ingester.sources.sweep import SweepResult, sweep_source
from haiku.ingester.sources.watching import FolderWatcher


async def sweep_once(app: IngesterApp, source: FolderSource) -> SweepResult:
    """One sweep, logged; raises SweepError (also logged) when the source cannot be listed."""
    log = get_logger(database=source.database, source=source.id)
    try:
        result = await sweep_source(source, app.pipeline.queue, process_started_at=app.started_at)
    except SweepError as exc:
        log.error("sweep failed", error=str(exc))
        raise
    log.info(
        "sweep done",
        files=result.listed,
        enqueued=result.enqueued,
        deletes=result.deletes,
        skipped_dead=result.skipped_dead,
        skipped=result.skipped.total,
        skipped_by_reason=result.skipped.as_json(),
    )
    app.metrics.sweep_skipped(source.database, source.id, result.skipped)
    if result.enqueued:
        app.wake.set()
    return result


def _start_watcher(
    app: IngesterApp, runtime: DatabaseRuntime, source: FolderSource, *, quiet: bool = False
) -> FolderWatcher | None:
    log = get_logger(database=source.database, source=source.id)
    watcher = FolderWatcher(
        source, lambda changes: app.on_changes(source, changes), loop=asyncio.get_running_loop()
    )
    try:
        watcher.start()
    except OSError as exc:
        if not quiet:
            log.error("cannot watch the source root; sweeps still run", root=str(source.root), error=str(exc))
        return None
    runtime.watchers.append(watcher)
    if not quiet:
        log.info("watching", root=str(source.root))
    return watcher


async def _sweep_forever(app: IngesterApp, runtime: DatabaseRuntime, source: FolderSource) -> None:
    interval = source.config.poll_interval_s
    log = get_logger(database=source.database, source=source.id)
    watcher_missing = source.config.watch and not any(w.source is source for w in runtime.watchers)
    # The first sweep at once: files already there wait for no interval. The periodic
    # ones start at a random offset, so sources started together do not sweep together.
    offset = random.uniform(0, interval * 0.25)
    while True:
        if watcher_missing and _start_watcher(app, runtime, source) is not None:
            watcher_missing = False
        live = app.pipeline.queue.jobs.live_count([source.database], source.id)
        if live:
            log.debug("sweep skipped: jobs still queued or claimed", jobs=live)
        else:
            try:
                await sweep_once(app, source)
            except SweepError:
                pass  # logged; the next tick tries again
        await asyncio.sleep(interval + offset)
        offset = 0.0


# How often a watched root's identity is checked: a swapped root is followed within about this long.
ROOT_CHECK_INTERVAL_S = 1.0


async def _follow_root(app: IngesterApp, runtime: DatabaseRuntime, source: FolderSource) -> None:
    """Keep the watch on the folder the root's name holds (docs/ingester.md, "Watching").

    A root swapped or moved away (``mv docs docs.old && mv docs.new docs``) leaves
    the watch on the old folder; the watcher judges no event meanwhile. Here the
    old watch is stopped and, once the name holds a folder again, a new one is
    started and the source swept at once: the sweep, with its "empty listing
    deletes nothing" guard, is the only thing that deletes for a changed root.
    """
    log = get_logger(database=source.database, source=source.id)
    while True:
        await asyncio.sleep(ROOT_CHECK_INTERVAL_S)
        watcher = next((w for w in runtime.watchers if w.source is source), None)
        if watcher is None:
            continue  # never started (the root was missing): the sweep loop starts it
        state = watcher.root_state()
        if state == "same":
            continue
        log.warning(
            "the source root was replaced or moved; watching the folder its name holds now"
            if state == "replaced"
            else "the source root vanished; deleting nothing, and watching it again once it is back",
            root=str(source.root),
        )
        runtime.watchers.remove(watcher)
        await asyncio.to_thread(watcher.stop)
        while _start_watcher(app, runtime, source, quiet=True) is None:
            await asyncio.sleep(ROOT_CHECK_INTERVAL_S)
        log.info("watching the root again", root=str(source.root))
        try:
            await sweep_once(app, source)
        except SweepError:
            pass  # logged; the periodic sweeps try again


def start_discovery(app: IngesterApp, runtime: DatabaseRuntime) -> None:
    for source in runtime.sources.values():
        if source.config.watch and source.root.is_dir():
            _start_watcher(app, runtime, source)
        runtime.tasks.append(
            asyncio.create_task(_sweep_forever(app, runtime, source), name=f"sweep-{runtime.name}-{source.id}")
        )
        if source.config.watch:
            runtime.tasks.append(
                asyncio.create_task(_follow_root(app, runtime, source), name=f"root-{runtime.name}-{source.id}")
            )
