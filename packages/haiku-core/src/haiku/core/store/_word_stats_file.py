"""The file holding one local database's word statistics (see ``word_stats``; docs/fusion.md).

``haiku-word-stats.sqlite`` in the database's directory: ``meta`` (layout,
the database's creation time, the chunks-table version described, the chunk
count), ``words(token, chunks)`` (chunks holding each token of the full-text
index) and ``spellings(word, token)`` (every word of the stored text, split as
a search splits a query, with the one token the index makes of it: ``""``
when it makes none, NULL when it makes several).

Readers open it read-only and trust only the exact version it names and only
values a writer writes (whole numbers from 0 to the chunk count, text
tokens); anything else is ignored and logged once. The writer moves it from
one version to the next in one SQLite transaction (only the tokens that
changed), or replaces it whole (a temporary file renamed over it).
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from haiku.core.logs import get_logger

if TYPE_CHECKING:  # sqlite3 loads on first use: opening a store for a listing needs none
    import sqlite3

log = get_logger("haiku.core.store")

FILE_NAME = "haiku-word-stats.sqlite"
_LAYOUT = "2"
_IN_BATCH = 500
_BUSY_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class Stamp:
    """Which chunks table a file describes: the database's creation time and the table version."""

    created: str
    version: int


def _whole(value: Any, at_most: int | None = None) -> bool:
    return type(value) is int and value >= 0 and (at_most is None or value <= at_most)


def _select(connection: sqlite3.Connection, table: str, key: str, values: Sequence[str]) -> list[tuple[Any, Any]]:
    """The rows of ``table`` whose ``key`` is one of ``values`` (in slices SQLite accepts)."""
    rows: list[tuple[Any, Any]] = []
    for start in range(0, len(values), _IN_BATCH):
        part = list(values[start : start + _IN_BATCH])
        marks = ",".join("?" * len(part))
        rows.extend(connection.execute(f"SELECT * FROM {table} WHERE {key} IN ({marks})", part))
    return rows


def _spelled_counts(
    connection: sqlite3.Connection, words: Sequence[str], version: int
) -> dict[str, tuple[Any, Any]] | None:
    """Each of ``words`` the file spells, with its token and that token's chunk count (0 when none),
    read in one statement with the version the file describes; None when that is not ``version``."""
    found: dict[str, tuple[Any, Any]] = {}
    for start in range(0, max(1, len(words)), _IN_BATCH):
        part = list(words[start : start + _IN_BATCH])
        marks = ",".join("?" * len(part))
        rows = connection.execute(
            "SELECT NULL, NULL, value FROM meta WHERE key = 'version' UNION ALL "
            "SELECT s.word, s.token, coalesce(w.chunks, 0) FROM spellings s LEFT JOIN words w ON w.token = s.token "
            f"WHERE s.word IN ({marks})",
            part,
        ).fetchall()
        if not rows or rows[0] != (None, None, version):
            return None
        found.update((word, (token, chunks)) for word, token, chunks in rows[1:])
    return found


_VERSION = "SELECT value FROM meta WHERE key = 'version'"
_ignored: set[Path] = set()


class WordStatsFile:
    """One database's file: read by searches (``lookup``), kept by its writer."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # (stamp, read-only connection, chunk count): the version a reader last found described.
        self._reader: tuple[Stamp, sqlite3.Connection, int] | None = None
        self._reading = threading.Lock()  # one connection: lookups from several threads take turns

    # --- reading (any process) ---------------------------------------------------
    def lookup(
        self, stamp: Stamp, words: Sequence[str], tokenize: Callable[[str], list[str]] | None
    ) -> tuple[int, dict[str, int]] | None:
        """The chunk count and the counts of those lower-case ``words`` the file can answer; None: not usable.

        A word is found through its spelling; a word no chunk spells is made
        into tokens by ``tokenize`` (the index's tokenizer, loaded only then),
        or, with ``tokenize=None``, left to be counted.
        A word the index splits in several tokens is left to be counted.

        A reader keeps one read-only connection per described version (a
        connection costs more than the lookup, and each query word of a
        long-lived client's searches is new): each lookup reads the version
        the file describes in the same statement as the counts, so a writer
        moving the file on between two lookups is always seen.
        """
        import sqlite3

        with self._reading:
            held = self._held_at(stamp)
            if held is None:
                return None
            connection, chunks = held
            lower = sorted({word for word in words if word == word.lower()})
            try:
                # One statement, one snapshot: the version it describes and the spelled words' counts.
                found = _spelled_counts(connection, lower, stamp.version)
                if found is None:
                    self._drop()  # the writer moved it on: the next version's lookups reopen it
                    return None
                tokens: dict[str, Any] = {}
                for word in (word for word in lower if word not in found):
                    made = None if tokenize is None else tokenize(word)
                    tokens[word] = None if made is None or len(made) > 1 else (made[0] if made else "")
                wanted = sorted({token for token in tokens.values() if token})
                counted = dict(_select(connection, "words", "token", wanted)) if wanted else {}
                if wanted and connection.execute(_VERSION).fetchone() != (stamp.version,):
                    self._drop()
                    return None
            except sqlite3.Error as error:
                self._drop()
                self._ignored(f"unreadable: {type(error).__name__}")
                return None
        for word, token in tokens.items():
            found[word] = (token, counted.get(token, 0) if token else 0)  # "": the index keeps no token of it
        if not all(token is None or isinstance(token, str) for token, _ in found.values()):
            self._ignored("a spelling's token is not text")
            return None
        if not all(_whole(n, chunks) for token, n in found.values() if token):
            self._ignored("a word count is not a whole number from 0 to the chunk count")
            return None
        return chunks, {word: n for word, (token, n) in found.items() if token is not None}

    def _held_at(self, stamp: Stamp) -> tuple[sqlite3.Connection, int] | None:
        """The held connection and chunk count for ``stamp``, opened and checked once per version."""
        import sqlite3

        if self._reader is not None and self._reader[0] == stamp:
            return self._reader[1], self._reader[2]
        self._drop()
        connection = self._connect(read_only=True)
        if connection is None:
            return None
        try:
            chunks = self._chunks_at(connection, stamp)
        except sqlite3.Error as error:
            connection.close()
            self._ignored(f"unreadable: {type(error).__name__}")
            return None
        if chunks is None:
            connection.close()
            return None
        self._reader = (stamp, connection, chunks)
        return connection, chunks

    def _drop(self) -> None:
        reader, self._reader = self._reader, None
        if reader is not None:
            reader[1].close()

    # --- the writer --------------------------------------------------------------
    def describes(self, stamp: Stamp) -> bool:
        """Whether the file holds sound statistics of exactly this table version."""
        return self._sound_version(stamp.created) == stamp.version

    def base_version(self, created: str) -> int | None:
        """The version a sound file of this database describes, or None (count every row)."""
        return self._sound_version(created)

    def spelled(self, words: Sequence[str]) -> set[str]:
        """Which of ``words`` the file already spells."""
        connection = self._connect(read_only=True)
        if connection is None:
            return set()
        try:
            return {word for word, _ in _select(connection, "spellings", "word", sorted(words))}
        finally:
            connection.close()

    def advance(
        self,
        base: int,
        stamp: Stamp,
        chunks: int,
        added: Mapping[str, int],
        removed: Mapping[str, int],
        spellings: Mapping[str, str | None],
    ) -> bool:
        """Move the file from version ``base`` to ``stamp`` in one transaction; False when it cannot be."""
        connection = self._connect(read_only=False)
        if connection is None:
            return False
        try:
            connection.execute("BEGIN IMMEDIATE")
            if self._chunks_at(connection, Stamp(stamp.created, base)) is None:
                connection.rollback()
                return False
            changed = sorted(set(added) | set(removed))
            now = dict(_select(connection, "words", "token", changed))
            updated = {token: now.get(token, 0) + added.get(token, 0) - removed.get(token, 0) for token in changed}
            if not all(0 <= n <= chunks for n in updated.values()):
                connection.rollback()
                return False  # the file did not describe that version after all
            connection.executemany("DELETE FROM words WHERE token = ?", [(t,) for t, n in updated.items() if not n])
            connection.executemany(
                "INSERT OR REPLACE INTO words VALUES (?, ?)", [(t, n) for t, n in updated.items() if n]
            )
            connection.executemany("INSERT OR IGNORE INTO spellings VALUES (?, ?)", spellings.items())
            connection.executemany(
                "UPDATE meta SET value = ? WHERE key = ?", [(stamp.version, "version"), (chunks, "chunks")]
            )
            connection.commit()
            return True
        finally:
            connection.close()

    def save(self, stamp: Stamp, chunks: int, words: Mapping[str, int], spellings: Mapping[str, str | None]) -> None:
        """Replace the file whole (a temporary file renamed over it)."""
        import sqlite3

        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=".word-stats-", dir=self.path.parent)
        os.close(fd)
        try:
            connection = sqlite3.connect(temporary)
            try:
                connection.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value)")
                connection.execute("CREATE TABLE words (token TEXT PRIMARY KEY, chunks INTEGER NOT NULL)")
                connection.execute("CREATE TABLE spellings (word TEXT PRIMARY KEY, token TEXT)")
                meta = {"layout": _LAYOUT, "created": stamp.created, "version": stamp.version, "chunks": chunks}
                connection.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
                connection.executemany("INSERT INTO words VALUES (?, ?)", ((t, n) for t, n in words.items() if n > 0))
                connection.executemany("INSERT INTO spellings VALUES (?, ?)", spellings.items())
                connection.commit()
            finally:
                connection.close()
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    # --- internals ---------------------------------------------------------------
    def _connect(self, *, read_only: bool) -> sqlite3.Connection | None:
        import sqlite3

        mode = "ro" if read_only else "rw"
        try:
            connection = sqlite3.connect(f"file:{self.path}?mode={mode}", uri=True, timeout=_BUSY_TIMEOUT_S)
        except sqlite3.Error:
            return None
        connection.isolation_level = None  # transactions only where ``advance`` opens one
        return connection

    def _sound_version(self, created: str) -> int | None:
        """The version a file of this database describes when every value in it is one a writer writes."""
        import sqlite3

        connection = self._connect(read_only=True)
        if connection is None:
            return None
        try:
            meta = dict(connection.execute("SELECT key, value FROM meta"))
            version, chunks = meta.get("version"), meta.get("chunks")
            if meta.get("layout") != _LAYOUT or meta.get("created") != created:
                return None
            if not (_whole(version) and _whole(chunks)):
                return None
            bad = connection.execute(
                "SELECT COUNT(*) FROM words WHERE typeof(token) != 'text' OR typeof(chunks) != 'integer' "
                "OR chunks < 0 OR chunks > ?",
                (chunks,),
            ).fetchone()[0]
            bad += connection.execute(
                "SELECT COUNT(*) FROM spellings WHERE typeof(word) != 'text' OR typeof(token) NOT IN ('text', 'null')"
            ).fetchone()[0]
            return version if bad == 0 else None
        except sqlite3.Error:
            return None
        finally:
            connection.close()

    def _chunks_at(self, connection: sqlite3.Connection, stamp: Stamp) -> int | None:
        """The chunk count when the file describes exactly ``stamp``, else None (logged when damaged)."""
        meta = dict(connection.execute("SELECT key, value FROM meta"))
        if meta.get("layout") != _LAYOUT:
            return None
        if meta.get("created") != stamp.created or meta.get("version") != stamp.version:
            return None  # another version (or database): the writer has not caught up
        chunks = meta.get("chunks")
        if not _whole(chunks):
            self._ignored("the chunk count is not a whole number from 0")
            return None
        return chunks

    def _ignored(self, problem: str) -> None:
        if self.path not in _ignored:
            _ignored.add(self.path)
            log.warning("store.word_stats_ignored", file=str(self.path), problem=problem)
