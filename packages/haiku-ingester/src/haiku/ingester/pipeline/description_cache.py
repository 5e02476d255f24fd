"""The pictures already described, by the SHA-256 of their PNG and the model's name (docs/pictures.md).

One SQLite file beside the ingester's queue, so a re-ingest or a reprocess of
a document asks the vision model only for the pictures it has not described
before. Only descriptions are kept: a picture the model failed on is asked
again next time.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path

CACHE_FILE = "picture-descriptions.db"


def image_key(png: bytes) -> str:
    return hashlib.sha256(png).hexdigest()


class DescriptionCache:
    """Descriptions by (image hash, model name); safe to use from several threads."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, timeout=30)
        with self._lock, self._db:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS descriptions (image_sha256 TEXT NOT NULL, model TEXT NOT NULL, "
                "description TEXT NOT NULL, PRIMARY KEY (image_sha256, model))"
            )

    def get_many(self, keys: Iterable[str], model: str) -> dict[str, str]:
        wanted = list(dict.fromkeys(keys))
        found: dict[str, str] = {}
        with self._lock:
            for start in range(0, len(wanted), 500):
                batch = wanted[start : start + 500]
                marks = ",".join("?" * len(batch))
                rows = self._db.execute(
                    f"SELECT image_sha256, description FROM descriptions WHERE model = ? AND image_sha256 IN ({marks})",
                    [model, *batch],
                ).fetchall()
                found.update(dict(rows))
        return found

    def put(self, key: str, model: str, description: str) -> None:
        with self._lock, self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO descriptions (image_sha256, model, description) VALUES (?, ?, ?)",
                (key, model, description),
            )

    def count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM descriptions").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()
