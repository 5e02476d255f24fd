"""What fusion needs only when several databases are searched together (docs/fusion.md).

The fusion rules themselves, shared with a store's own hybrid search, are in
``haiku.core.fusion``. Here is the federation's inverse document frequency:
each database scores BM25 with its own statistics, and these factors make its
scores those of one database holding every chunk searched.
"""

from __future__ import annotations

from collections.abc import Sequence

from haiku.core.store.fulltext import TermStatistics, bm25_idf


def global_idf_boosts(statistics: Sequence[TermStatistics]) -> list[dict[str, float]]:
    """Per database, the factor turning its BM25 of each query word into BM25 with the federation's IDF.

    BM25 scores a word ``idf * tf_part``; a database computes ``idf`` over its
    own chunks (N_db, df_db). Summed over the databases searched together,
    N and df give the IDF one database holding every chunk would use, so
    boosting the word by ``idf(df, N) / idf(df_db, N_db)`` makes each
    database's scores those of one database, up to each database's own
    average chunk length (docs/fusion.md). A word a database does not hold
    gets no factor there: it matches nothing in it.
    """
    total = sum(stats.chunks for stats in statistics)
    frequency: dict[str, int] = {}
    for stats in statistics:
        for word, df in stats.frequencies.items():
            frequency[word] = frequency.get(word, 0) + df
    return [
        {
            word: bm25_idf(frequency[word], total) / bm25_idf(df, stats.chunks)
            for word, df in stats.frequencies.items()
            if df > 0
        }
        for stats in statistics
    ]
