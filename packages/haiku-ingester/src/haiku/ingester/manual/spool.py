"""What ``add`` keeps in the data directory for a document added by hand (docs/ingester.md).

Under ``<data_dir>/ingester-added/<database>/<key of the uri>/``:

- ``<content hash>.<ext>``: bytes read from standard input or fetched from a
  URL, written and synced before their job is queued, so a crash after ``add``
  acknowledged them loses nothing. The job reads them there; once no job of
  that document is live they are removed (``prune``).
- ``fields.json``: what the command gave (title, metadata) and, for a URL, its
  ``ETag``/``Last-Modified`` for ``add --refresh``. Kept as long as the
  document is.

A lock file keeps a prune from removing bytes whose job is being queued.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

FIELDS = "fields.json"


@dataclass
class GivenFields:
    """What ``add`` was told about a document, beside its bytes."""

    uri: str
    title: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    etag: str | None = None  # a URL's validators, for the conditional request of `add --refresh`
    last_modified: str | None = None
    fetched_hash: str | None = None  # the content the validators belong to

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GivenFields:
        return cls(
            uri=str(data["uri"]),
            title=data.get("title"),
            metadata=dict(data.get("metadata") or {}),
            etag=data.get("etag"),
            last_modified=data.get("last_modified"),
            fetched_hash=data.get("fetched_hash"),
        )


def _read_fields(folder: Path) -> GivenFields | None:
    try:
        data = json.loads((folder / FIELDS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return GivenFields.from_json(data) if isinstance(data, dict) and isinstance(data.get("uri"), str) else None


def _key(uri: str) -> str:
    return hashlib.sha256(uri.encode("utf-8")).hexdigest()[:32]


def _write_synced(path: Path, data: bytes) -> None:
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


class Spool:
    """The added documents' folder of one data directory."""

    def __init__(self, data_dir: Path) -> None:
        self.root = Path(data_dir).expanduser() / "ingester-added"

    def folder(self, database: str, uri: str) -> Path:
        return self.root / database / _key(uri)

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Held while bytes are written and their job queued, and while pruning."""
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    # --- bytes ---------------------------------------------------------------------
    def keep(self, database: str, uri: str, data: bytes, digest: str, extension: str) -> Path:
        """Write the bytes (synced) as ``<digest>.<ext>``; call under ``locked``."""
        folder = self.folder(database, uri)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{digest.replace(':', '-')}{extension}"
        if not path.exists():
            _write_synced(path, data)
        return path

    def latest(self, database: str, uri: str) -> Path | None:
        """The bytes kept last for this document, if any."""
        folder = self.folder(database, uri)
        try:
            kept = [p for p in folder.iterdir() if p.name != FIELDS and not p.name.endswith(".tmp")]
        except FileNotFoundError:
            return None
        return max(kept, key=lambda p: p.stat().st_mtime_ns, default=None)

    @staticmethod
    def revision_of(path: Path) -> str:
        """The revision of kept bytes: their content hash, which names the file."""
        return path.name.split(".", 1)[0].replace("-", ":", 1)

    # --- fields --------------------------------------------------------------------
    def fields(self, database: str, uri: str) -> GivenFields | None:
        return _read_fields(self.folder(database, uri))

    def put_fields(self, database: str, fields: GivenFields) -> None:
        folder = self.folder(database, fields.uri)
        folder.mkdir(parents=True, exist_ok=True)
        _write_synced(folder / FIELDS, json.dumps(asdict(fields), ensure_ascii=False).encode("utf-8"))

    def uris(self, database: str) -> list[str]:
        """The uris of every document this database has fields for."""
        base = self.root / database
        if not base.is_dir():
            return []
        return [
            fields.uri for folder in sorted(base.iterdir()) if (fields := _read_fields(folder)) is not None
        ]

    # --- cleaning ------------------------------------------------------------------
    def prune(self, database: str, live: Callable[[str], bool], known: Callable[[str], bool]) -> int:
        """Remove kept bytes of documents with no live job; and a document's whole folder once it is
        gone (no live job, no sync record). Returns how many files went."""
        removed = 0
        base = self.root / database
        if not base.is_dir():
            return 0
        with self.locked():
            for folder in list(base.iterdir()):
                fields = _read_fields(folder)
                if fields is None or live(fields.uri):
                    continue
                if not known(fields.uri):
                    removed += sum(1 for _ in folder.iterdir())
                    shutil.rmtree(folder, ignore_errors=True)
                    continue
                for path in folder.iterdir():
                    if path.name != FIELDS:
                        path.unlink(missing_ok=True)
                        removed += 1
        return removed
