"""Full-text word counts kept between processes, per database and table version.

A fresh ``haiku-rag search`` over several databases would otherwise count
every query word in every database again (one index query each). The counts
are a cache, never the truth: a file that is missing, unreadable, of another
table version or of another layout is ignored, and one that cannot be written
is not written. Writers replace the file whole (write a temporary file, then
rename), merging what another process saved for the same version.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

_LAYOUT = 1
# Past this many words a file starts again empty, like the in-memory cache.
MAX_SAVED_WORDS = 50_000

Counts = tuple[int, int, dict[str, int]]  # (table version, chunk count, {word: chunks matching it})


@dataclass(frozen=True)
class CountsFile:
    path: Path
    location: str

    @classmethod
    def for_database(cls, data_dir: Path, location: str) -> CountsFile:
        digest = hashlib.sha256(location.encode()).hexdigest()[:32]
        return cls(data_dir / "cache" / "fts-counts" / f"{digest}.json", location)

    def load(self, version: int) -> Counts | None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if data.get("layout") != _LAYOUT or data.get("location") != self.location:
                return None
            if int(data["version"]) != version:
                return None
            counts = {str(word): int(n) for word, n in data["counts"].items()}
            return version, int(data["chunks"]), counts
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def save(self, counts: Counts) -> None:
        version, chunks, words = counts
        merged = dict(words)
        on_disk = self.load(version)
        if on_disk is not None and on_disk[1] == chunks:
            merged = {**on_disk[2], **words}
        if len(merged) > MAX_SAVED_WORDS:
            merged = dict(words)
        data = {"layout": _LAYOUT, "location": self.location, "version": version, "chunks": chunks, "counts": merged}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, temporary = tempfile.mkstemp(prefix=".counts-", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    json.dump(data, out, separators=(",", ":"))
                os.replace(temporary, self.path)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
        except OSError:
            pass  # a cache: a read-only or full data directory only costs the next process the counts
