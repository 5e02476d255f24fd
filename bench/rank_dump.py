"""Every ranking the client gives, written down so two checkouts can be compared.

    python bench/rank_dump.py --out rankings.json [--scifact PATH] [--documents N] [--queries Q]
    python bench/rank_dump.py --compare before.json after.json

A refactoring of the client, the store or fusion must not move a single
result. This builds (once, under ``bench/.cache/rank_dump``) a small SciFact
layout split over three databases, each document cut into chunks of about 600
characters and embedded by the configured model, through the benchmarks' one
builder (bench/layout_build.py). Then it searches ``--queries`` judged queries
with every search type under every fusion setting (``search.fusion``,
``search.fts_idf``, ``search.vector_index_metric``, and a deterministic
reranker), over the whole set, over one database selected by ``sources`` and
over a client covering one database, and also records listings and context
expansion. Every result is written as ``(source, chunk id, document id,
score)``; run it from two checkouts over the same ``--cache`` and compare
the two files with ``--compare``: every ranking must hold the same results
(source, chunk id, document id, and content where recorded) in the same
order, each score within ``SCORE_TOLERANCE`` of the other's (a change of the
order of floating-point additions moves the last bits, never a rank).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench import layout_build  # noqa: E402
from bench.beir import load_beir  # noqa: E402
from bench.layout_build import databases_config  # noqa: E402

if TYPE_CHECKING:
    from bench.beir import BeirDoc

    from haiku.core.store.writes import DocumentWrite

NAMES = ("alpha", "beta", "gamma")
SETTINGS: dict[str, dict[str, Any]] = {
    "rrf-global-cosine": {"fusion": "rrf", "fts_idf": "global", "vector_index_metric": "cosine"},
    "rrf-local-cosine": {"fusion": "rrf", "fts_idf": "local", "vector_index_metric": "cosine"},
    "cosine-global-cosine": {"fusion": "cosine", "fts_idf": "global", "vector_index_metric": "cosine"},
    "rrf-global-l2": {"fusion": "rrf", "fts_idf": "global", "vector_index_metric": "l2"},
    "cosine-local-l2": {"fusion": "cosine", "fts_idf": "local", "vector_index_metric": "l2"},
}
SEARCH_TYPES = ("vector", "fts", "hybrid")
LIMIT = 10
SCORE_TOLERANCE = 1e-6


def log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def chunks_of(text: str, size: int = 600) -> list[str]:
    """Sentences gathered into pieces of about ``size`` characters."""
    pieces: list[str] = []
    current = ""
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        if current and len(current) + len(sentence) > size:
            pieces.append(current)
            current = ""
        current = f"{current} {sentence}".strip()
    if current:
        pieces.append(current)
    return pieces or [text]


def pick_documents(dataset: Any, documents: int, queries: int) -> tuple[list[BeirDoc], dict[str, str]]:
    """The documents judged for the first ``queries`` judged queries, topped up in corpus order."""
    judged = dict(list(dataset.judged_queries.items())[:queries])
    wanted = {doc_id for qid in judged for doc_id in dataset.qrels.get(qid, {})}
    chosen = [d for d in dataset.corpus if d.id in wanted]
    chosen += [d for d in dataset.corpus if d.id not in wanted][: max(0, documents - len(chosen))]
    return chosen, judged


async def writes(docs: list[BeirDoc], config: Any) -> list[DocumentWrite]:
    from haiku.core.embedders import get_embedder
    from haiku.core.models import Chunk, Document

    embedder = get_embedder(config)
    out: list[DocumentWrite] = []
    for doc in docs:
        pieces = chunks_of(doc.full_text)
        vectors = await embedder.embed_documents(pieces)
        document = Document(uri=f"scifact://{doc.id}", title=doc.title, content=doc.full_text, metadata={"beir_id": doc.id})
        out.append((document, [Chunk(order=i, content=p) for i, p in enumerate(pieces)], vectors))
    return out


async def build(root: Path, docs: list[BeirDoc]) -> None:
    config = databases_config({name: root / f"{name}.lancedb" for name in NAMES}, root / "build-data")
    done = layout_build.complete_build(root / "complete.json", len(docs))
    if done is not None:
        return
    shares: dict[str, Iterator[DocumentWrite]] = {}
    for i, name in enumerate(NAMES):
        shares[name] = iter(await writes(docs[i :: len(NAMES)], config))
        log(f"[{name}] embedded")
    await layout_build.build_layout(root / "complete.json", config, shares, len(docs), log, split=len(NAMES))


class _LengthReranker:
    """A deterministic stand-in reranker: scores by the share of query words a candidate holds."""

    async def rerank(self, query: str, documents: Any, top_n: int) -> list[tuple[int, float]]:
        words = set(query.lower().split())
        scored = [(i, sum(w in d.lower() for w in words) / (1 + len(words))) for i, d in enumerate(documents)]
        scored.sort(key=lambda pair: (-pair[1], pair[0]))
        return scored[:top_n]

    async def aclose(self) -> None:
        return None


def row(result: Any) -> list[Any]:
    return [result.source, result.chunk_id, result.document_id, repr(result.score)]


async def dump(root: Path, data_dir: Path, queries: dict[str, str]) -> dict[str, Any]:
    from haiku.rag import rerankers
    from haiku.rag.client import HaikuRAG

    databases = {name: root / f"{name}.lancedb" for name in NAMES}
    out: dict[str, Any] = {}
    texts = list(queries.values())
    for label, search in [*SETTINGS.items(), ("reranked", {"fusion": "rrf", "fts_idf": "global"})]:
        config = databases_config(databases, data_dir, search=search)
        if label == "reranked":
            config = databases_config(
                databases, data_dir, search=search,
                reranking={"model": {"provider": "http", "name": "stand-in", "base_url": "http://127.0.0.1:9/v1"}},
            )
            rerankers.create_reranker = lambda _model: _LengthReranker()  # type: ignore[assignment]
        async with HaikuRAG(config=config, read_only=True) as client:
            async with HaikuRAG(config=config, sources=["beta"], read_only=True) as single:
                for search_type in SEARCH_TYPES:
                    for n, query in enumerate(texts):
                        key = f"{label}/{search_type}/{n}"
                        found = await client.search(query, limit=LIMIT, search_type=search_type)
                        out[f"{key}/set"] = [row(r) for r in found]
                        picked = await client.search(query, limit=LIMIT, search_type=search_type, sources=["gamma", "alpha"])
                        out[f"{key}/two"] = [row(r) for r in picked]
                        alone = await single.search(query, limit=LIMIT, search_type=search_type)
                        out[f"{key}/one"] = [row(r) for r in alone]
                        if n < 10:
                            expanded = await client.expand_context(found)
                            out[f"{key}/expanded"] = [[*row(r), r.content] for r in expanded]
            if label == "rrf-global-cosine":
                for limit, offset in ((None, None), (7, 3), (50, 0)):
                    listed = await client.list_documents(limit=limit, offset=offset)
                    out[f"list/{limit}/{offset}"] = [[d.source, d.id] for d in listed]
                out["count"] = [await client.count_documents(), await client.count_chunks()]
        log(f"dumped {label}")
    return out


def differences(before: dict[str, Any], after: dict[str, Any], tolerance: float = SCORE_TOLERANCE) -> list[str]:
    """Each ranking that differs: other keys, other results or order, or a score further than ``tolerance``."""
    found = [f"{key}: only in the first" for key in sorted(set(before) - set(after))]
    found += [f"{key}: only in the second" for key in sorted(set(after) - set(before))]
    for key in sorted(set(before) & set(after)):
        old, new = before[key], after[key]
        if key == "count" or key.startswith("list/"):
            if old != new:
                found.append(f"{key}: {old} != {new}")
            continue
        if len(old) != len(new):
            found.append(f"{key}: {len(old)} results != {len(new)}")
            continue
        for rank, (a, b) in enumerate(zip(old, new, strict=True)):
            same_result = a[:3] == b[:3] and a[4:] == b[4:]
            if not same_result:
                found.append(f"{key} rank {rank}: {a[:3]} != {b[:3]}")
                break
            if abs(float(a[3]) - float(b[3])) > tolerance:
                found.append(f"{key} rank {rank}: score {a[3]} != {b[3]}")
                break
    return found


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scifact", type=Path, default=REPO.parent / "shared" / "data" / "scifact")
    parser.add_argument("--cache", type=Path, default=REPO / "bench" / ".cache" / "rank_dump")
    parser.add_argument("--documents", type=int, default=400)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--build-only", action="store_true")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--compare", type=Path, nargs=2, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.compare:
        before, after = (json.loads(path.read_text()) for path in args.compare)
        found = differences(before, after)
        for line in found[:50]:
            print(line)
        print(f"{len(before)} rankings compared: {len(found)} differ (scores within {SCORE_TOLERANCE})")
        raise SystemExit(1 if found else 0)
    dataset = load_beir(args.scifact)
    docs, queries = pick_documents(dataset, args.documents, args.queries)
    root = args.cache / f"scifact-{len(docs)}"
    await build(root, docs)
    if args.build_only or args.out is None:
        return
    data_dir = args.out.with_suffix(".data")
    found = await dump(root, data_dir, queries)
    args.out.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    log(f"{len(found)} rankings written to {args.out}")


if __name__ == "__main__":
    asyncio.run(main())
