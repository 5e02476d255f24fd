"""One builder for the benchmarks' databases: a corpus split over configured databases.

Used by the quality benchmark (bench/quality_build.py: the converter's chunks),
the search benchmark and the command-line benchmark (bench/search.py: one chunk
per document). Each database is filled through ``Store.load_documents``, the
store's documented bulk path (batched ``upsert_documents`` under one hold of the
writer lock, indexes refreshed once; docs/storage.md), then vacuumed with no
retention, so every layout is searched in the same settled state: compacted,
its indexes covering every row, no write history.

A manifest written last marks a complete build and is reused while it counts the
same documents. An interrupted build resumes: documents already stored (by uri)
are not written again.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from haiku.core.config import AppConfig
    from haiku.core.store.writes import DocumentWrite

Log = Callable[[str], None]


def databases_config(databases: Mapping[str, Path], data_dir: Path, **sections: Any) -> AppConfig:
    """An AppConfig naming ``databases`` in the order given (the configured order), auto-vacuum off."""
    from haiku.core.config import config_from_dict

    return config_from_dict(
        {
            "storage": {"data_dir": str(data_dir), "auto_vacuum": False},
            "lancedb": {"databases": {name: str(path) for name, path in databases.items()}},
            **sections,
        }
    )


def complete_build(manifest: Path, documents: int) -> dict[str, Any] | None:
    """The manifest of a finished build of ``documents`` documents, or None."""
    if not manifest.exists():
        return None
    found = json.loads(manifest.read_text())
    return found if found.get("documents") == documents else None


async def fill_database(
    name: str, location: Path, config: AppConfig, items: Iterable[DocumentWrite], log: Log
) -> dict[str, int]:
    """Write ``items`` (those whose uri is not stored yet), vacuum, and count what the database holds."""
    from haiku.core.scope import DatabaseRef
    from haiku.core.store import Store

    store = await Store.open(DatabaseRef.configured(name, location), config, create=True)
    try:
        present = {d.uri for d in await store.reads.list_documents()}
        await store.writer().documents.load_documents(
            (item for item in items if item[0].uri not in present),
            progress=lambda written: log(f"[{name}] {written} documents written"),
        )
        await store.vacuum(retention_seconds=0)
        return {"documents": await store.reads.count_documents(), "chunks": await store.reads.count_chunks()}
    finally:
        await store.close()


async def build_layout(
    manifest: Path,
    config: AppConfig,
    parts: Mapping[str, Iterable[DocumentWrite]],
    documents: int,
    log: Log,
    **about: Any,
) -> dict[str, Any]:
    """Fill each configured database with its part, all at once; returns the manifest.

    ``parts`` maps each database name of ``config`` to what it stores, ``documents``
    in all; ``about`` goes into the manifest as it is (what the layout is).
    """
    done = complete_build(manifest, documents)
    if done is not None:
        return done
    locations = {name: Path(entry.location) for name, entry in config.lancedb.databases.items()}
    started = time.perf_counter()
    counts = await asyncio.gather(
        *(fill_database(name, locations[name], config, items, log) for name, items in parts.items())
    )
    seconds = time.perf_counter() - started
    stored = sum(c["documents"] for c in counts)
    if stored != documents:
        raise RuntimeError(f"{manifest.parent}: {stored} documents stored, {documents} expected")
    built = {
        "complete": True,
        **about,
        "documents": documents,
        "databases": dict(zip(parts, counts, strict=True)),
        "build_seconds": round(seconds, 1),
    }
    manifest.parent.mkdir(parents=True, exist_ok=True)
    manifest.write_text(json.dumps(built, indent=2) + "\n")
    log(f"built {manifest.parent.name}: {documents} documents in {len(parts)} database(s), {seconds:.0f}s")
    return built
