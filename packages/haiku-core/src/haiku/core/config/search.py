"""``search`` and ``reranking``: how a query is answered (docs/configuration.md#search, docs/fusion.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from haiku.core.config._base import Section


class RerankModelConfig(Section):
    provider: Literal["cross-encoder", "http"]
    name: str
    base_url: str | None = None
    api_key: str | None = None


class RerankingConfig(Section):
    model: RerankModelConfig | None = None


class SearchConfig(Section):
    limit: int = Field(default=5, gt=0)
    # The most results one search or listing returns (CLI, client and MCP alike): a
    # larger limit fails with LimitTooLargeError instead of reading every chunk.
    max_limit: int = Field(default=1000, gt=0, le=1_000_000)
    rerank_pool_factor: int = Field(default=10, gt=0)
    max_context_chars: int = Field(default=5000, ge=0)
    vector_index_metric: Literal["cosine", "l2"] = "cosine"
    vector_nprobes: int = Field(default=40, gt=0)
    vector_refine_factor: int = Field(default=50, gt=0)
    # How hybrid (and full-text) candidates from several databases are fused
    # when no reranker is configured. "rrf" keeps the full-text signal across
    # databases (docs/fusion.md); "cosine" is the original rule.
    fusion: Literal["rrf", "cosine"] = "rrf"
    # Full-text scores over several databases: "global" weighs each query word
    # by its IDF over all the databases searched together, as one database
    # holding everything would (docs/fusion.md); "local" keeps each database's own.
    fts_idf: Literal["global", "local"] = "global"
    # The longest query a search takes (a clear error past it): bounds the work one query may cost.
    max_query_chars: int = Field(default=8192, gt=0)
    # A selected database that cannot be opened or read: "fail" the search naming it (the
    # original rule), or "skip" it, answer from the others and say which were skipped and why.
    on_unavailable: Literal["fail", "skip"] = "fail"
    # Megabytes of small databases' vectors a long-lived process keeps in memory for exact
    # vector search by matrix product (docs/storage.md#vectors-in-memory); 0 turns it off.
    memory_vectors_mb: int = Field(default=512, ge=0)

    @model_validator(mode="after")
    def _limit_within_max_limit(self) -> SearchConfig:
        if self.limit > self.max_limit:
            raise ValueError(f"limit ({self.limit}) must be at most max_limit ({self.max_limit})")
        return self
