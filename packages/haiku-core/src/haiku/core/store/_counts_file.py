"""Full-text word counts kept between processes, per database and table version.

A fresh ``haiku-rag search`` over several databases would otherwise count
every query word in every database again (one index query each). The counts
are a cache, never the truth: a file that is missing, unreadable, of another
table version or of another layout is ignored, and one that cannot be written
is not written. Writers replace the file whole (write a temporary file, then
rename), merging what another process saved for the same version.

A file that does not hold what a writer writes (counts that are not whole
numbers from 0 to the chunk count: ``1e999``, ``-5``, ``2.5``, a list where the
words go) is damaged or tampered with: it is removed, logged once, and written
afresh by the next search, so it can neither crash a search nor change a
score.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from haiku.core.logs import get_logger

log = get_logger("haiku.core.store")

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
            text = self.path.read_bytes()
        except OSError:
            return None
        try:
            data = json.loads(text)
        except ValueError:  # UnicodeDecodeError too
            self._discard("not JSON")
            return None
        if not isinstance(data, dict):
            self._discard("not a JSON object")
            return None
        if data.get("layout") != _LAYOUT or data.get("location") != self.location:
            return None  # another layout, or (a digest collision) another database: not ours to judge
        problem = _problem(data)
        if problem is not None:
            self._discard(problem)
            return None
        if data["version"] != version:
            return None
        return version, data["chunks"], dict(data["counts"])

    def _discard(self, problem: str) -> None:
        """Remove a damaged file (the next save writes it afresh), saying so once per process."""
        if self.path not in _discarded:
            _discarded.add(self.path)
            log.warning("store.fts_counts_discarded", file=str(self.path), problem=problem)
        try:
            self.path.unlink(missing_ok=True)
        except OSError:
            pass  # a read-only data directory: ignored on every load, still never used

    def save(self, counts: Counts) -> None:
        """Write the counts, merged with those saved for the same version and chunk count."""
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


# The damaged files already logged by this process.
_discarded: set[Path] = set()


def _whole(value: Any, *, at_most: int | None = None) -> bool:
    """A whole number from 0 (to ``at_most``): not a bool, a float such as ``1e999``, nor a string."""
    return type(value) is int and value >= 0 and (at_most is None or value <= at_most)


def _problem(data: dict[str, Any]) -> str | None:
    """What makes a file of this layout unlike one a writer wrote, or None."""
    if not _whole(data.get("version")):
        return "the table version is not a whole number from 0"
    chunks = data.get("chunks")
    if not _whole(chunks):
        return "the chunk count is not a whole number from 0"
    counts = data.get("counts")
    if not isinstance(counts, dict):
        return "the word counts are not an object"
    if not all(_whole(n, at_most=chunks) for n in counts.values()):
        return "a word count is not a whole number from 0 to the chunk count"
    return None
