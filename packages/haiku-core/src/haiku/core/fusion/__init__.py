"""Every fusion rule, in one place (docs/fusion.md).

How the candidates of one or several databases become one ranking. A store's
own hybrid search and the federating client's search both fuse here, so one
database ranks alike whether asked alone, through ``Store.search`` or through
``HaikuRAG.search``.

* ``rules``: plain functions over ranked lists: reciprocal rank fusion
  (``fuse_rrf``, ``reciprocal_rank_fusion``, ``hybrid_depth``), cosine to the
  query vector (``fuse_by_cosine``), full-text score (``fuse_by_score``), the
  reranker's order over the union (``interleave``, ``order_by_reranker``), and
  ``round_robin`` for listings (docs/fusion.md#the-rules).
* ``global_idf``: the federation's IDF for full-text scores
  (``global_idf_boosts``, ``GlobalIdf``;
  docs/fusion.md#why-full-text-search-needs-global-statistics).
* ``survivors``: fusing bare candidates, then enriching only the survivors
  through the database each came from, orphans dropped (``fuse_and_enrich``;
  docs/client.md#how-results-from-several-databases-are-ranked).

None of it imports the store: the databases are anything with the few
methods each module's protocol names.
"""

from haiku.core.fusion.global_idf import GlobalIdf, bm25_idf, global_idf_boosts
from haiku.core.fusion.rules import (
    HYBRID_DEPTH_FACTOR,
    RRF_K,
    Key,
    Ranked,
    cosine_from_vector_score,
    cosine_scores,
    fuse_by_cosine,
    fuse_by_score,
    fuse_rrf,
    hybrid_depth,
    interleave,
    key_of,
    order_by_reranker,
    reciprocal_rank_fusion,
    round_robin,
)
from haiku.core.fusion.survivors import fuse_and_enrich

__all__ = [
    "HYBRID_DEPTH_FACTOR",
    "RRF_K",
    "GlobalIdf",
    "Key",
    "Ranked",
    "bm25_idf",
    "cosine_from_vector_score",
    "cosine_scores",
    "fuse_and_enrich",
    "fuse_by_cosine",
    "fuse_by_score",
    "fuse_rrf",
    "global_idf_boosts",
    "hybrid_depth",
    "interleave",
    "key_of",
    "order_by_reranker",
    "reciprocal_rank_fusion",
    "round_robin",
]
