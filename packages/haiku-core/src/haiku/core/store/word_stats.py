"""Word statistics kept with the database (docs/fusion.md, "Word statistics kept with the database").

A federated full-text search weighs every query word by the federation's IDF,
which needs each database's chunk count and, per word, how many chunks hold
it. Counting a word is a LanceDB query per database; this file lets a search
look the counts up instead. It lives inside a local database's directory
(``haiku-word-stats.sqlite``: ``words(token, chunks)``, ``spellings(word,
token)`` for every word of the stored text as a search splits a query, and
``meta``), describes one version of the chunks table, and is kept by the
process that writes the database:

* after every commit to the chunks table (a write, a step of auto-maintenance,
  a vacuum, a rebuild: the store tells them all from one place, ``gate``),
  ``WordStatsKeeper`` brings it, in the background, to the chunks table's new
  version, from the version it last described:
  the rows of the new version that the old one did not hold are tokenised and
  added, the rows it no longer holds are tokenised and subtracted. A row is
  named by its chunk id and revision, under which its text never changes, so
  a compaction, which moves every row, changes nothing. When the old version
  was cleaned up, or nothing was kept yet, every row is tokenised once;
* tokens are the index's own: ``lance.tokenize`` with the options of the
  full-text index (``indexes.fts_config``), so a word's count equals what a
  one-word index query counts (orphan chunks included, as BM25 sees them).

A search trusts the file only for the exact table version (and database
creation time) it names, and only values a writer writes: whole numbers from
0 to the chunk count. Anything else is ignored, logged once, and the writer
counts afresh on its next refresh. A search finds a query word through its
spelling (so a search whose words the database's chunks all spell loads no
tokenizer); a word no chunk spells is tokenised (its stem may still match),
and one the index splits into several tokens (``covid_19``) is counted as
before.
Databases on object storage keep no file; their searches count.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from haiku.core.logs import get_logger
from haiku.core.store._word_stats_file import FILE_NAME, Stamp, WordStatsFile
from haiku.core.store.gate import Commits
from haiku.core.store.handles import Handles
from haiku.core.store.schema import CHUNKS, REVISION

if TYPE_CHECKING:
    from lancedb.table import AsyncTable

__all__ = ["FILE_NAME", "WORD", "Stamp", "WordStatsFile", "WordStatsKeeper", "index_tokens", "stamp_of", "stats_file"]

log = get_logger("haiku.core.store")

_FTS_COLUMN = "search_text"
_TAKE_BATCH = 2048
WORD = re.compile(r"\w+")  # how a search splits a query into words (``fulltext.query_words``)
# A refresh waits this many times as long as the last one took before the next, so a writer
# spends at most about a fifth of its time on statistics however fast the writes come.
_SPACING = 4.0


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


def stamp_of(handles: Handles, version: int) -> Stamp:
    created = handles.settings.created_at
    return Stamp("" if created is None else created.isoformat(), version)


def stats_file(handles: Handles) -> WordStatsFile | None:
    """The database's file, or None where none is kept (object storage)."""
    path = handles.location.path
    return None if path is None else WordStatsFile(path / FILE_NAME)


async def _rows(table: AsyncTable, *, by_text: bool = False) -> pa.Table:
    """Each row's address (``_rowid``) and ``key``: the address, or what names its text for good.

    A write's rows keep their addresses, so the addresses two versions do not
    share are the rows a write changed. A compaction moves every row without
    changing any text; ``by_text`` keys each row by its chunk id and revision
    instead (a chunk's text never changes under one revision: a write that
    changes it stamps a new one), at about 70 bytes a row.
    """
    import pyarrow.compute as pc

    if not by_text:
        rows = await table.query().select(["_rowid"]).with_row_id().to_arrow()
        return pa.table({"key": rows["_rowid"], "_rowid": rows["_rowid"]})
    rows = await table.query().select(["id", REVISION]).with_row_id().to_arrow()
    key = pc.binary_join_element_wise(rows["id"], pc.fill_null(rows[REVISION], ""), "/")
    return pa.table({"key": key, "_rowid": rows["_rowid"]})


def _only_in(rows: pa.Table, other: pa.Table) -> np.ndarray:
    """The addresses of the rows of ``rows`` whose key ``other`` does not hold."""
    import pyarrow.compute as pc

    missing = pc.invert(pc.is_in(rows["key"], value_set=other["key"].combine_chunks()))
    return rows["_rowid"].filter(missing).to_numpy()


def _unique(rows: pa.Table) -> bool:
    import pyarrow.compute as pc

    return pc.count_distinct(rows["key"]).as_py() == rows.num_rows


async def _texts(table: AsyncTable, row_ids: np.ndarray) -> list[str | None]:
    ids = [int(i) for i in row_ids]
    texts: list[str | None] = []
    for start in range(0, len(ids), _TAKE_BATCH):
        rows = await table.take_row_ids(ids[start : start + _TAKE_BATCH]).select([_FTS_COLUMN]).to_arrow()
        texts.extend(rows.column(_FTS_COLUMN).to_pylist())
    return texts


def _count_tokens(texts: Sequence[str | None]) -> Counter[str]:
    """How many of the texts hold each token."""
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(set(index_tokens(text or "")))
    return counts


def _spellings(texts: Sequence[str | None], known: set[str] | None = None) -> dict[str, str | None]:
    """Each word of the texts (as a search splits a query) not in ``known``, with what its one-word
    index query matches: its one token, none (``""``), or several (None: searches count it)."""
    words = {word for text in texts for word in WORD.findall((text or "").lower())} - (known or set())
    spelled: dict[str, str | None] = {}
    for word in words:
        tokens = index_tokens(word)
        spelled[word] = (tokens[0] if tokens else "") if len(tokens) <= 1 else None
    return spelled


class WordStatsKeeper:
    """Keeps a writable local database's word statistics at its chunks table's latest version."""

    def __init__(self, handles: Handles) -> None:
        self.handles = handles
        self.file = stats_file(handles)
        self._task: asyncio.Task[None] | None = None
        self._again = False
        # Set by ``settle``: the spacing wait ends at once (after a long count it can last many minutes).
        self._settling = asyncio.Event()
        self._last_seconds = 0.0

    @property
    def kept(self) -> bool:
        return self.file is not None and not self.handles.read_only

    def after_commits(self, commits: Commits) -> None:
        """Told of the commits under one hold of the writer lock: refresh when the chunks table moved."""
        if CHUNKS in commits:
            self.after_write()

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
        """Wait for a refresh in flight, and the one after it without the spacing (a store settles before it closes)."""
        task, self._task = self._task, None
        if task is not None:
            self._settling.set()
            try:
                await asyncio.gather(task, return_exceptions=True)
            finally:
                self._settling.clear()

    async def _refresh_in_background(self) -> None:
        while True:
            self._again = False
            await self.refresh()
            if not self._again or self.handles.closed:
                return
            try:
                await asyncio.wait_for(self._settling.wait(), _SPACING * self._last_seconds)
            except TimeoutError:
                pass

    async def refresh(self) -> None:
        """Bring the file to the chunks table's latest version; never raises (the counts are a help)."""
        if not self.kept or self.handles.closed:
            return
        started = asyncio.get_running_loop().time()
        try:
            await self._refresh()
        except Exception as error:  # a write or vacuum must never fail for its statistics
            log.warning("store.word_stats_failed", database=self.handles.name, error=f"{type(error).__name__}: {error}")
        self._last_seconds = asyncio.get_running_loop().time() - started

    async def _refresh(self) -> None:
        assert self.file is not None
        file, handles = self.file, self.handles
        version = await handles.chunks.version()
        stamp = stamp_of(handles, version)
        table = await handles.connection.open_table(CHUNKS, version=version)
        try:
            if await asyncio.to_thread(file.describes, stamp):
                return
            current = await _rows(table)
            base = await asyncio.to_thread(file.base_version, stamp.created)
            how = "advanced" if base is not None and await self._advance(base, stamp, current, table) else "counted"
            if how == "counted":
                texts = await _texts(table, current["_rowid"].to_numpy())
                words, spellings = await asyncio.to_thread(lambda: (_count_tokens(texts), _spellings(texts)))
                await asyncio.to_thread(file.save, stamp, current.num_rows, words, spellings)
            log.debug("store.word_stats_kept", database=handles.name, version=version, how=how)
        finally:
            table.close()

    async def _advance(self, base: int, stamp: Stamp, current: pa.Table, table: AsyncTable) -> bool:
        """Move the file from version ``base`` by the rows that changed; False: count every row instead."""
        assert self.file is not None
        try:
            old = await self.handles.connection.open_table(CHUNKS, version=base)
        except Exception:  # cleaned up by a vacuum
            return False
        try:
            previous = await _rows(old)
            added, removed = _only_in(current, previous), _only_in(previous, current)
            if len(added) + len(removed) > current.num_rows // 4 and self.handles.revisioned:
                # Most rows moved (a compaction): what changed is told by text, not by place.
                current, previous = await _rows(table, by_text=True), await _rows(old, by_text=True)
                if not (_unique(current) and _unique(previous)):
                    return False  # a chunk stored twice under one revision: count every row
                added, removed = _only_in(current, previous), _only_in(previous, current)
            if len(added) + len(removed) > current.num_rows:
                return False  # most rows rewritten: counting them once is cheaper
            new_texts, old_texts = await _texts(table, added), await _texts(old, removed)
        finally:
            old.close()
        file = self.file

        def advance() -> bool:
            words = {word for text in new_texts for word in WORD.findall((text or "").lower())}
            # A spelling maps a word to its token whatever holds it: removed rows keep theirs.
            spellings = _spellings(new_texts, file.spelled(sorted(words)))
            return file.advance(
                base, stamp, current.num_rows, _count_tokens(new_texts), _count_tokens(old_texts), spellings
            )

        return await asyncio.to_thread(advance)
