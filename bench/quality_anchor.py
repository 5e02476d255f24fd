"""Exact vector search outside the project's path: the anchor's diagnostics.

The published all-MiniLM-L6-v2 SciFact figure (0.645 nDCG@10) embeds each whole
document once, truncated by the model at 256 word pieces. The project embeds
chunks of at most ``processing.chunk_size`` tokens and ranks a document at its
best chunk. Brute-force cosine over the cached vectors gives both settings
without any database, so a gap between the project's one-database figure and
the published one can be split into "chunking" (direct whole vs direct chunks)
and "storage and search" (direct chunks vs the store).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def exact_rankings(
    query_ids: Sequence[str],
    query_vectors: np.ndarray,
    item_vectors: np.ndarray,
    item_owner: Sequence[str],
    depth: int = 100,
) -> dict[str, list[str]]:
    """Each query's owners (documents) by best cosine of their items, best first.

    Vectors are assumed unit length (the embedder normalises), so the dot product
    is the cosine.
    """
    if len(item_owner) != item_vectors.shape[0]:
        raise ValueError("one owner per item vector")
    scores = np.asarray(query_vectors, dtype=np.float32) @ np.asarray(item_vectors, dtype=np.float32).T
    runs: dict[str, list[str]] = {}
    for row, qid in enumerate(query_ids):
        # Stable sort: equal scores keep item order, so the result is deterministic.
        order = np.argsort(-scores[row], kind="stable")
        ranked: list[str] = []
        seen: set[str] = set()
        for j in order:
            owner = item_owner[j]
            if owner not in seen:
                seen.add(owner)
                ranked.append(owner)
                if len(ranked) == depth:
                    break
        runs[qid] = ranked
    return runs
