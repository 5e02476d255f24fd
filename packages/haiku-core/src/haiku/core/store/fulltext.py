"""Full-text term statistics and IDF-boosted queries (docs/fusion.md, "Why full-text search needs global statistics").

BM25 weighs each query word by its inverse document frequency, which each
database computes over its own chunks. Over several databases the same chunk
then scores differently depending on which database holds it, and merging
scores mixes those errors in. The federating client removes them with two
reads offered here:

* ``fts_statistics(words)``: the database's chunk count and, per word, how
  many chunks match it. Each count is a one-word query against the full-text
  index, so LanceDB tokenises, lower-cases and stems the word exactly as it
  indexed the text. Counts are cached per chunks-table version: a long-lived
  client pays for a word once per database until the database changes.
* ``fts_candidates(..., boosts={word: factor})``: the query as a disjunction of
  its words, each boosted, so a database can rank with the federation's IDF
  (``factor = idf_global / idf_local``; see ``haiku.core.fusion.global_idf``).

The counts also persist between processes (``CountsFile``, under
``<storage.data_dir>/cache/fts-counts``), so a command-line search counts each
word once per database version, not once per run.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from haiku.core.store._counts_file import CountsFile
from haiku.core.store.handles import Handles
from haiku.core.store.word_stats import WORD, index_tokens, stamp_of, stats_file

if TYPE_CHECKING:
    from lancedb.table import AsyncTable

FTS_COLUMN = "search_text"
# The index's tokenizer drops longer tokens (max_token_length), so such a word matches nothing.
_MAX_TOKEN_LENGTH = 40
# A long-lived client's cache of counts per database; cleared whole when it overflows.
_MAX_CACHED_WORDS = 50_000
# The most distinct words of one query that are counted (and searched) with the federation's
# IDF: each word costs one index query per database, so a pasted page must not cost thousands.
MAX_QUERY_WORDS = 64
# Words no chunk spells that a process counts by query before it loads the index's tokenizer
# instead (``_loaded_tokenizer``); the words so counted, process-wide.
_COUNTS_BEFORE_TOKENIZER = 50
_counted_unspelled = [0]


def query_words(text: str) -> list[str]:
    """The distinct words of a full-text query, lower-cased, in order of first appearance.

    The index's "simple" tokenizer splits on what is not a letter or digit;
    splitting the same way means each word is one token the index can count.
    At most ``MAX_QUERY_WORDS``: the first ones.
    """
    words = (word for word in WORD.findall(text.lower()) if len(word) <= _MAX_TOKEN_LENGTH)
    distinct: dict[str, None] = {}
    for word in words:
        distinct.setdefault(word)
        if len(distinct) == MAX_QUERY_WORDS:
            break
    return list(distinct)


@dataclass(frozen=True)
class TermStatistics:
    """One database's chunk count and its chunk frequency of each asked word."""

    chunks: int
    frequencies: Mapping[str, int] = field(default_factory=dict)


def boosted_query(boosts: Mapping[str, float]) -> Any:
    """A disjunction of the words, each scored by BM25 times its factor."""
    from lancedb.query import BooleanQuery, MatchQuery, Occur

    return BooleanQuery(
        [(Occur.SHOULD, MatchQuery(word, FTS_COLUMN, boost=float(factor))) for word, factor in boosts.items()]
    )


class FullTextStats:
    """One database's full-text term statistics, cached per chunks-table version."""

    def __init__(self, handles: Handles) -> None:
        self.handles = handles
        # (table version, chunk count, {word: chunks matching it}); set on first use.
        self.counts: tuple[int, int, dict[str, int]] | None = None
        # The statistics its writer keeps with the database (``word_stats``).
        self.word_stats = stats_file(handles)
        self.words_counted = 0  # words this store counted with index queries: none kept, none cached

    async def fts_statistics(self, words: Iterable[str]) -> TermStatistics:
        """The chunk count and each word's chunk frequency at the current table version.

        Orphan chunks (a write in progress) are counted: they are in the index
        BM25 reads, and a count is only ever a statistic, never a result.
        """
        self.handles.require_open()
        wanted = list(dict.fromkeys(words))
        table = self.handles.chunks
        version = await table.version()
        cached = self.counts
        if cached is None or cached[0] != version or len(cached[2]) > _MAX_CACHED_WORDS:
            cached = self._counts_file().load(version) or await self._fresh_counts(table, version)
            self.counts = cached
        _, chunks, counts = cached
        missing = [word for word in wanted if word not in counts]
        if missing and self.word_stats is not None:
            kept = self.word_stats.lookup(stamp_of(self.handles, version), missing, _loaded_tokenizer())
            if kept is not None and kept[0] == chunks:
                counts.update(kept[1])
                missing = [word for word in missing if word not in counts]
        if missing and chunks:
            _counted_unspelled[0] += len(missing)
            found = await asyncio.gather(*(_count_matches(table, word, chunks) for word in missing))
            self.words_counted += len(missing)
            counts.update(zip(missing, found, strict=True))
            # Off the event loop: the merge with the file, the JSON and the rename take several
            # milliseconds that the other databases' queries of the same search would wait out.
            snapshot = (cached[0], cached[1], dict(cached[2]))
            await asyncio.to_thread(self._counts_file().save, snapshot)
        return TermStatistics(chunks, {word: counts.get(word, 0) for word in wanted})

    async def _fresh_counts(self, table: AsyncTable, version: int) -> tuple[int, int, dict[str, int]]:
        """No counts yet for this version: the chunk count from the kept statistics, or counted."""
        if self.word_stats is not None:
            kept = self.word_stats.lookup(stamp_of(self.handles, version), [], None)
            if kept is not None:
                return version, kept[0], {}
        return version, await table.count_rows(), {}

    def _counts_file(self) -> CountsFile:
        # A tagged read gets a file of its own: its version never changes.
        uri, tag = self.handles.location.uri, self.handles.tag
        return CountsFile.for_database(self.handles.config.data_dir, uri if tag is None else f"{uri}@{tag}")


def _loaded_tokenizer() -> Callable[[str], list[str]] | None:
    """The index's tokenizer, or None while counting words is still the cheaper way.

    A word no stored chunk spells is either made into its token by the
    index's tokenizer or counted by a one-word query (the same count: the
    query stems the word as the index did). Loading the tokenizer (the
    ``lance`` package) costs 50-100 ms, a count 1-2 ms, so a process counts
    until its counts have cost about what loading would (a command-line
    search never gets there), then loads it; a process that has it loaded
    already (a writer) uses it from the start (docs/fusion.md, "Word
    statistics kept with the database").
    """
    if "lance" in sys.modules or _counted_unspelled[0] >= _COUNTS_BEFORE_TOKENIZER:
        return index_tokens
    return None


async def _count_matches(table: AsyncTable, word: str, chunks: int) -> int:
    from lancedb.query import MatchQuery

    # Only the score column: reading any stored column makes the count several times slower.
    query = table.query().nearest_to_text(MatchQuery(word, FTS_COLUMN)).select(["_score"]).limit(chunks)
    matched = await query.to_arrow()
    return matched.num_rows
