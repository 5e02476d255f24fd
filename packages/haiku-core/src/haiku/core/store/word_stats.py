"""Word statistics kept with the database (docs/fusion.md, "Word statistics kept with the database").

A federated full-text search weighs every query word by the federation's IDF,
which needs each database's chunk count and, per word, how many chunks hold
it. Counting a word is a LanceDB query per database; this file lets a search
look the counts up instead. It lives inside a local database's directory
(``haiku-word-stats.sqlite``: ``words(token, chunks)``, ``spellings(word,
token)`` for every word of the stored text as a search splits a query, and
``meta``), describes one version of the chunks table, and is kept by the
process that writes the database:

* after every committed write and every vacuum, ``WordStatsKeeper`` brings it
  to the chunks table's new version, from the version it last described:
  the rows of the new version that the old one did not hold are tokenised and
  added, the rows it no longer holds are tokenised and subtracted (a LanceDB
  row address names one stored row for good, so the difference of the two
  versions' addresses is exactly what changed). When the old version was
  cleaned up, or nothing was kept yet, every row is tokenised once;
* tokens are the index's own: ``lance.tokenize`` with the options of the
  full-text index (``indexes.fts_config``), so a word's count equals what a
  one-word index query counts (orphan chunks included, as BM25 sees them).

A search trusts the file only for the exact table version (and database
creation time) it names, and only values a writer writes: whole numbers from
0 to the chunk count. Anything else is ignored, logged once, and the writer
counts afresh on its next refresh. A word no stored chunk spells (its stem
may still match) or one the index splits into several tokens (``covid_19``)
is not answered: the search counts it as before. So a search needs no
tokenizer of its own (importing ``lance`` would cost a command-line search
more than the few counts it saves).
Databases on object storage keep no file; their searches count.
"""

from __future__ import annotations

import asyncio
import os
import re
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from haiku.core.logs import get_logger
from haiku.core.store.handles import Handles
from haiku.core.store.schema import CHUNKS

if TYPE_CHECKING:  # sqlite3 loads on first use: opening a store for a listing needs none
    import sqlite3

    from lancedb.table import AsyncTable

log = get_logger("haiku.core.store")

FILE_NAME = "haiku-word-stats.sqlite"
_LAYOUT = "2"
_FTS_COLUMN = "search_text"
_TAKE_BATCH = 2048
WORD = re.compile(r"\w+")  # how a search splits a query into words (``fulltext.query_words``)


@dataclass(frozen=True)
class Stamp:
    """Which chunks table a file describes: the database's creation time and the table version."""

    created: str
    version: int


@dataclass
class Saved:
    """What a file holds: its stamp, the chunk count, chunks per token, and each spelling's token.

    A spelling's token is ``""`` when the index keeps none of it, None when it makes several.
    """

    stamp: Stamp
    chunks: int
    words: Counter[str]
    spellings: dict[str, str | None]


def _select(connection: sqlite3.Connection, table: str, key: str, values: Sequence[str]) -> list[tuple[Any, Any]]:
    """The rows of ``table`` whose ``key`` is one of ``values`` (in slices SQLite accepts)."""
    rows: list[tuple[Any, Any]] = []
    for start in range(0, len(values), 500):
        part = list(values[start : start + 500])
        marks = ",".join("?" * len(part))
        rows.extend(connection.execute(f"SELECT * FROM {table} WHERE {key} IN ({marks})", part))
    return rows


@cache
def _tokenizer_options() -> dict[str, Any]:
    from haiku.core.store.indexes import fts_config

    config = fts_config()
    names = ("base_tokenizer", "language", "max_token_length", "lower_case", "stem", "remove_stop_words",
             "ascii_folding")  # fmt: skip
    return {name: getattr(config, name) for name in names}


def index_tokens(text: str) -> list[str]:
    """The tokens the full-text index makes of ``text``."""
    import lance

    return [token.text for token in lance.tokenize(text, **_tokenizer_options())]


def _whole(value: Any, at_most: int | None = None) -> bool:
    return type(value) is int and value >= 0 and (at_most is None or value <= at_most)


def stamp_of(handles: Handles, version: int) -> Stamp:
    created = handles.settings.created_at
    return Stamp("" if created is None else created.isoformat(), version)


@dataclass(frozen=True)
class WordStatsFile:
    """The word statistics of one local database (module docstring)."""

    path: Path

    @classmethod
    def of(cls, handles: Handles) -> WordStatsFile | None:
        """The database's file, or None where none is kept (object storage)."""
        path = handles.location.path
        return None if path is None else cls(path / FILE_NAME)

    def lookup(self, stamp: Stamp, words: Sequence[str]) -> tuple[int, dict[str, int]] | None:
        """The chunk count and the counts of those lower-case ``words`` the file can answer; None: not usable.

        A word is answered through its spelling (the words of the stored text,
        each with the one index token it makes): a word no chunk spells, or
        one the index splits in several tokens, is left to be counted.
        """
        import sqlite3

        connection = self._open_to_read()
        if connection is None:
            return None
        try:
            chunks = self._checked_meta(connection, stamp)
            if chunks is None:
                return None
            spelled = dict(_select(connection, "spellings", "word", sorted({w for w in words if w == w.lower()})))
            if not all(isinstance(token, str) or token is None for token in spelled.values()):
                self._ignored("a spelling's token is not text")
                return None
            tokens = sorted({token for token in spelled.values() if token})
            found = dict(_select(connection, "words", "token", tokens))
        except sqlite3.Error as error:
            self._ignored(f"unreadable: {type(error).__name__}")
            return None
        finally:
            connection.close()
        if not all(_whole(n, chunks) for n in found.values()):
            self._ignored("a word count is not a whole number from 0 to the chunk count")
            return None
        counts: dict[str, int] = {}
        for word in words:
            if word in spelled and spelled[word] is not None:
                token = spelled[word]
                counts[word] = found.get(token, 0) if token else 0  # "": the index keeps no token of it
        return chunks, counts

    def describes(self, stamp: Stamp) -> bool:
        """Whether the file holds the statistics of exactly this table version."""
        import sqlite3

        connection = self._open_to_read()
        if connection is None:
            return False
        try:
            chunks = self._checked_meta(connection, stamp)
            if chunks is None:
                return False
            bad = connection.execute(
                "SELECT COUNT(*) FROM words WHERE typeof(chunks) != 'integer' OR chunks < 0 OR chunks > ?",
                (chunks,),
            ).fetchone()[0]
            bad += connection.execute(
                "SELECT COUNT(*) FROM spellings WHERE typeof(word) != 'text' OR typeof(token) NOT IN ('text', 'null')"
            ).fetchone()[0]
            return bad == 0
        except sqlite3.Error:
            return False
        finally:
            connection.close()

    def load(self, stamp_created: str) -> Saved | None:
        """Everything the file holds, for the writer; None when missing, damaged or of another database."""
        import sqlite3

        connection = self._open_to_read()
        if connection is None:
            return None
        try:
            meta = dict(connection.execute("SELECT key, value FROM meta"))
            version, chunks = meta.get("version"), meta.get("chunks")
            if meta.get("layout") != _LAYOUT or meta.get("created") != stamp_created:
                return None
            if not (_whole(version) and _whole(chunks)):
                return None
            words = Counter(dict(connection.execute("SELECT token, chunks FROM words")))
            spellings = dict(connection.execute("SELECT word, token FROM spellings"))
        except sqlite3.Error:
            return None
        finally:
            connection.close()
        if not all(isinstance(token, str) and _whole(n, chunks) for token, n in words.items()):
            return None
        if not all(isinstance(word, str) and (token is None or isinstance(token, str)) for word, token in spellings.items()):
            return None
        return Saved(Stamp(stamp_created, version), chunks, words, spellings)

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
                connection.executemany("INSERT INTO spellings VALUES (?, ?)", spellings.items())
                meta = {"layout": _LAYOUT, "created": stamp.created, "version": stamp.version, "chunks": chunks}
                connection.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
                connection.executemany("INSERT INTO words VALUES (?, ?)", ((t, n) for t, n in words.items() if n > 0))
                connection.commit()
            finally:
                connection.close()
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    def _open_to_read(self) -> sqlite3.Connection | None:
        import sqlite3

        try:
            return sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
        except sqlite3.Error:
            return None

    def _checked_meta(self, connection: sqlite3.Connection, stamp: Stamp) -> int | None:
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


_ignored: set[Path] = set()


async def _row_ids(table: AsyncTable) -> np.ndarray:
    """The row addresses of the table's rows, sorted (8 bytes a row)."""
    rows = await table.query().select(["_rowid"]).with_row_id().to_arrow()
    return np.sort(rows.column("_rowid").to_numpy())


async def _counted(
    table: AsyncTable, row_ids: np.ndarray, spellings: dict[str, str | None] | None
) -> Counter[str]:
    """How many of these rows hold each token; every word they spell is added to ``spellings`` (if given)."""
    ids = [int(i) for i in row_ids]
    counts: Counter[str] = Counter()
    for start in range(0, len(ids), _TAKE_BATCH):
        rows = await table.take_row_ids(ids[start : start + _TAKE_BATCH]).select([_FTS_COLUMN]).to_arrow()
        texts = rows.column(_FTS_COLUMN).to_pylist()
        counts.update(await asyncio.to_thread(_count_tokens, texts, spellings))
    return counts


def _count_tokens(texts: Sequence[str | None], spellings: dict[str, str | None] | None) -> Counter[str]:
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(set(index_tokens(text or "")))
        if spellings is None:
            continue
        for word in set(WORD.findall((text or "").lower())) - spellings.keys():
            # The word as a search splits a query (``fulltext.query_words``), and what its one-word
            # index query matches: its one token, none (""), or several (None: searches count it).
            tokens = index_tokens(word)
            spellings[word] = (tokens[0] if tokens else "") if len(tokens) <= 1 else None
    return counts


class WordStatsKeeper:
    """Keeps a writable local database's word statistics at its chunks table's latest version."""

    def __init__(self, handles: Handles) -> None:
        self.handles = handles
        self.file = WordStatsFile.of(handles)
        self._task: asyncio.Task[None] | None = None
        self._again = False

    @property
    def kept(self) -> bool:
        return self.file is not None and not self.handles.read_only

    def after_write(self) -> None:
        """Refresh in the background (once more after a refresh in flight)."""
        if not self.kept:
            return
        if self._task is not None and not self._task.done():
            self._again = True
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._task = loop.create_task(self._refresh_in_background())

    async def settle(self) -> None:
        """Wait for a refresh in flight (a store settles before it closes)."""
        task, self._task = self._task, None
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)

    async def _refresh_in_background(self) -> None:
        while True:
            self._again = False
            await self.refresh()
            if not self._again or self.handles.closed:
                return

    async def refresh(self) -> None:
        """Bring the file to the chunks table's latest version; never raises (the counts are a help)."""
        if not self.kept or self.handles.closed:
            return
        try:
            await self._refresh()
        except Exception as error:  # a write or vacuum must never fail for its statistics
            log.warning("store.word_stats_failed", database=self.handles.name, error=f"{type(error).__name__}: {error}")

    async def _refresh(self) -> None:
        assert self.file is not None
        handles = self.handles
        version = await handles.chunks.version()
        stamp = stamp_of(handles, version)
        table = await handles.connection.open_table(CHUNKS, version=version)
        try:
            if await asyncio.to_thread(self.file.describes, stamp):
                return
            saved = await asyncio.to_thread(self.file.load, stamp.created)
            current = await _row_ids(table)
            kept = await self._advanced(saved, current, table)
            if kept is None:
                spellings: dict[str, str | None] = {}
                kept = Saved(stamp, len(current), await _counted(table, current, spellings), spellings)
            words = kept.words
            await asyncio.to_thread(self.file.save, stamp, len(current), words, kept.spellings)
            log.debug("store.word_stats_kept", database=handles.name, version=version, words=len(words))
        finally:
            table.close()

    async def _advanced(self, saved: Saved | None, current: np.ndarray, table: AsyncTable) -> Saved | None:
        """The saved counts moved to ``table``'s rows, or None when they cannot be (count every row)."""
        if saved is None:
            return None
        try:
            old = await self.handles.connection.open_table(CHUNKS, version=saved.stamp.version)
        except Exception:  # cleaned up by a vacuum
            return None
        words, spellings = saved.words, saved.spellings
        try:
            previous = await _row_ids(old)
            added = np.setdiff1d(current, previous, assume_unique=True)
            removed = np.setdiff1d(previous, current, assume_unique=True)
            if len(added) + len(removed) > len(current):
                return None  # most rows rewritten (a compaction): counting them once is cheaper
            words.update(await _counted(table, added, spellings))
            # A spelling maps a word to its token whatever holds it, so removed rows keep theirs.
            words.subtract(await _counted(old, removed, None))
        finally:
            old.close()
        if any(n < 0 for n in words.values()):
            return None  # the saved counts did not describe that version after all
        return saved
