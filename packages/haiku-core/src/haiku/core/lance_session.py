"""One bounded LanceDB cache per process (docs/storage.md, "Memory").

LanceDB keeps an index cache (index pages and partitions) and a metadata cache
(manifests, fragment and file metadata) per session, by default 6 GiB and
1 GiB. Every commit is a new version whose manifest, fragments and refreshed
indexes are new cache entries, so a process that writes for hours (``serve``),
or reads a database another process keeps writing, grows by those entries
until the bounds: about a quarter of a megabyte per write, with no plateau
below a gigabyte. Every connection of a process shares one session bounded by
``lancedb.index_cache_mb`` and ``lancedb.metadata_cache_mb``.
"""

from __future__ import annotations

import threading
from typing import Any

from haiku.core.config import AppConfig

_lock = threading.Lock()
_sessions: dict[tuple[int, int], Any] = {}

MIB = 1024 * 1024


def lance_session(config: AppConfig) -> Any:
    """The process's ``lancedb.Session`` for these bounds (made on first use, then shared)."""
    key = (config.lancedb.index_cache_mb, config.lancedb.metadata_cache_mb)
    with _lock:
        session = _sessions.get(key)
        if session is None:
            from haiku.core._lancedb import import_lancedb

            lancedb = import_lancedb()
            session = lancedb.Session(index_cache_size_bytes=key[0] * MIB, metadata_cache_size_bytes=key[1] * MIB)
            _sessions[key] = session
        return session
