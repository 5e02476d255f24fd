"""``rebuild --db-name NAME``: re-embed every chunk with the configured embedder (docs/ingester.md).

It opens the database skipping the identity check (the point is that the
identity changed), holds the ingester's ownership lock so no ingester writes
meanwhile, and leaves a marker in the settings record while it runs: ``info``
and every open report an interrupted rebuild, and rerunning completes it. The
new identity is recorded only after every vector has been replaced.

When the database's vectors already come from the configured embedder (its
recorded identity, and no rebuild half done), there is nothing to re-embed: the
rebuild embeds nothing and writes nothing (it never re-chunks; chunks are cut
when files are ingested).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from haiku.core.config import AppConfig
from haiku.core.convert import embed_text
from haiku.core.embedders import EmbedderIdentity, get_embedder
from haiku.ingester.checks import ingested_refs, select_databases
from haiku.ingester.logs import get_logger
from haiku.ingester.picture_rebuild import rebuild_picture_vectors


@dataclass(frozen=True)
class RebuildReport:
    database: str
    chunks: int
    identity: EmbedderIdentity
    previous: EmbedderIdentity | None
    unchanged: bool = False  # the vectors were already of this embedder: nothing was embedded


async def rebuild(
    config: AppConfig, database_name: str, *, on_progress: Callable[[int, int], None] | None = None
) -> RebuildReport:
    from haiku.core.store import OwnershipLock, Store

    [name] = select_databases(config, database_name)
    ref = ingested_refs(config, [name])[name]
    log = get_logger(database=name)
    lock = OwnershipLock(ref, "ingester", holder="haiku-ingester rebuild")
    await lock.acquire()
    try:
        store = await Store.open(ref, config, skip_validation=True)
        try:
            embedder = get_embedder(config)
            identity = EmbedderIdentity.from_config(config.embeddings.model)
            previous = store.identity
            marker = store.rebuild_marker
            # An interrupted rebuild to this embedder that had recorded it has replaced every vector.
            if previous == identity and (marker is None or marker.get("to") == identity.to_dict()):
                if marker is not None:
                    await store.writer().rebuild.set_rebuild_marker(None)
                log.info("rebuild not needed: the vectors already come from this embedder", identity=identity.describe())
                return RebuildReport(database=name, chunks=0, identity=identity, previous=previous, unchanged=True)
            total = await store.reads.count_chunks()
            await store.writer().rebuild.set_rebuild_marker(
                {
                    "to": identity.to_dict(),
                    "from": previous.to_dict() if previous else None,
                    "started_at": datetime.now(UTC).isoformat(),
                }
            )
            log.info("rebuild started", chunks=total, to=identity.describe())
            # A new dimension changes the chunk schema: every vector must be replaced in one commit.
            same_dimension = store.vector_dim == identity.vector_dim
            held: dict[str, list[float]] = {}
            done = 0
            async for batch in store.writer().rebuild.iter_chunk_batches(batch_size=4 * embedder.batch_size):
                vectors = await embedder.embed_documents([embed_text(c.headings, c.content) for c in batch])
                replaced = {c.id: v for c, v in zip(batch, vectors, strict=True) if c.id}
                if same_dimension:
                    await store.writer().rebuild.replace_vectors(replaced)
                else:
                    held.update(replaced)
                done += len(batch)
                if on_progress is not None:
                    on_progress(done, total)
            if held:
                await store.writer().rebuild.replace_vectors(held)
            pictures = await rebuild_picture_vectors(store, embedder, identity.vector_dim)
            if pictures:
                log.info("picture vectors rebuilt", pictures=pictures)
            await store.writer().rebuild.record_identity(identity)
            await store.writer().rebuild.set_rebuild_marker(None)
            log.info("rebuild complete", chunks=done, identity=identity.describe())
            return RebuildReport(database=name, chunks=done, identity=identity, previous=previous)
        finally:
            await store.close()
    finally:
        lock.release()
