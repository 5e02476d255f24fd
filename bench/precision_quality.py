"""Retrieval with documents embedded in a reduced precision, against fp32 (docs/benchmarks.md).

    python bench/precision_quality.py [--scifact ../shared/data/scifact] [--docs 1000] [--precision bf16]

Embeds the first ``--docs`` SciFact abstracts twice with the real model, in
fp32 (the default document encoder) and in ``--precision`` on this machine's
document device (``embeddings.document_device: auto``), embeds the judged
queries whose relevant abstracts are among them once (queries always run in
fp32 on the CPU), ranks by exact cosine, and prints nDCG@10 and Recall@10 of
both, the minimum cosine between the two vectors of each abstract, and how
many top-10 lists are identical. Slow on a CPU without native bf16: run it alone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from bench.beir import load_beir  # noqa: E402
from bench.metrics import evaluate  # noqa: E402


def main() -> None:
    import numpy as np

    from haiku.core.config import config_from_dict
    from haiku.core.embedders import get_embedder

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scifact", type=Path, default=REPO.parent / "shared" / "data" / "scifact")
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--precision", choices=("fp16", "bf16"), default="bf16")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    data = load_beir(args.scifact)
    corpus = data.corpus[: args.docs]
    ids = [doc.id for doc in corpus]
    kept = set(ids)
    qrels = {q: j for q, j in data.qrels.items() if any(d in kept for d in j)}
    queries = {q: data.queries[q] for q in qrels if q in data.queries}
    texts = [doc.full_text for doc in corpus]

    full = get_embedder(config_from_dict({}))
    reduced = get_embedder(config_from_dict({"embeddings": {"document_precision": args.precision}}))
    started = time.perf_counter()
    full_vectors = np.asarray(full.encode(texts), dtype=np.float64)  # type: ignore[attr-defined]
    full_s = time.perf_counter() - started
    started = time.perf_counter()
    reduced_vectors = np.asarray(reduced.encode(texts), dtype=np.float64)  # type: ignore[attr-defined]
    reduced_s = time.perf_counter() - started
    query_ids = list(queries)
    query_vectors = np.asarray([asyncio.run(full.embed_query(queries[q])) for q in query_ids])

    def rankings(vectors):
        scores = query_vectors @ vectors.T
        return {q: [ids[i] for i in np.argsort(-scores[n])[:100]] for n, q in enumerate(query_ids)}

    ranked_full, ranked_reduced = rankings(full_vectors), rankings(reduced_vectors)
    result = {
        "docs": len(texts), "queries": len(query_ids), "precision": args.precision,
        "placement": reduced.describe_placement(),  # type: ignore[attr-defined]
        "fp32": evaluate(ranked_full, qrels), args.precision: evaluate(ranked_reduced, qrels),
        "min_cosine": float((full_vectors * reduced_vectors).sum(1).min()),
        "identical_top10": sum(ranked_full[q][:10] == ranked_reduced[q][:10] for q in query_ids),
        "seconds": {"fp32": round(full_s, 1), args.precision: round(reduced_s, 1)},
        "load": os.getloadavg(),
    }
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
