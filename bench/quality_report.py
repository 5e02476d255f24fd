"""The quality benchmark's verdicts and its markdown, kept apart from the running.

``results`` maps arm → layout → {"ndcg@10", "recall@10", "recall@100", "latency": {…}}.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench.quality_layouts import LAYOUT_LABELS

# all-MiniLM-L6-v2 on BEIR SciFact, nDCG@10 (MTEB / sentence-transformers model card).
PUBLISHED_MINILM_SCIFACT_NDCG10 = 0.645
ANCHOR_TOLERANCE = 0.01
# Federation "loses nothing": nDCG@10 over several databases within this of one database.
FEDERATION_TOLERANCE = 0.005
FEDERATED_ARMS = ("vector", "fts", "hybrid")
BASELINE = "one"
SECTION = "## Quality"
# How each arm fuses several databases (docs/fusion.md); arms not named show "default".
RULES = {
    "vector": "cosine",
    "fts": "BM25, global IDF",
    "fts-local-idf": "BM25, each db's IDF",
    "hybrid": "rrf, global IDF",
    "hybrid-local-idf": "rrf, each db's IDF",
    "hybrid-cosine": "cosine (original)",
}


def federation_checks(results: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """nDCG@10 of each federated layout against one database, for the default fusion."""
    checks = []
    for arm in FEDERATED_ARMS:
        layouts = results.get(arm, {})
        if BASELINE not in layouts:
            continue
        base = layouts[BASELINE]["ndcg@10"]
        for layout, row in layouts.items():
            if layout == BASELINE:
                continue
            delta = row["ndcg@10"] - base
            checks.append(
                {
                    "arm": arm,
                    "layout": layout,
                    "delta_ndcg@10": round(delta, 4),
                    "ok": abs(delta) <= FEDERATION_TOLERANCE,
                }
            )
    return checks


def anchor_check(
    results: Mapping[str, Mapping[str, Mapping[str, Any]]],
    diagnostics: Mapping[str, Mapping[str, float]] | None = None,
) -> dict[str, Any] | None:
    """One-database vector search against the published figure, with the exact searches beside it."""
    row = results.get("vector", {}).get(BASELINE)
    if row is None:
        return None
    delta = row["ndcg@10"] - PUBLISHED_MINILM_SCIFACT_NDCG10
    return {
        "published_ndcg@10": PUBLISHED_MINILM_SCIFACT_NDCG10,
        "measured_ndcg@10": round(row["ndcg@10"], 4),
        "delta": round(delta, 4),
        "ok": abs(delta) <= ANCHOR_TOLERANCE,
        "exact_ndcg@10": {name: m["ndcg@10"] for name, m in (diagnostics or {}).items()},
    }


def results_table(results: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> str:
    lines = [
        "| search | fusion | layout | nDCG@10 | Δ nDCG@10 vs 1 db | Recall@10 | Recall@100 | median ms | p95 ms |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for arm, layouts in results.items():
        search = arm.partition("-")[0]
        fusion = RULES.get(arm, "default")
        base = layouts.get(BASELINE, {}).get("ndcg@10")
        for layout, row in layouts.items():
            delta = "—" if base is None or layout == BASELINE else f"{row['ndcg@10'] - base:+.4f}"
            latency = row.get("latency", {})
            lines.append(
                f"| {search} | {fusion} | {LAYOUT_LABELS.get(layout, layout)} | {row['ndcg@10']:.4f} | {delta} "
                f"| {row['recall@10']:.4f} | {row['recall@100']:.4f} "
                f"| {latency.get('median_ms', float('nan')):.1f} | {latency.get('p95_ms', float('nan')):.1f} |"
            )
    return "\n".join(lines)


def _build_note(meta: Mapping[str, Any]) -> str:
    first = sum(m.get("build_seconds", 0.0) for m in meta.get("layouts", {}).values())
    if meta["build_seconds"] >= 1 or not first:
        return f"building the databases {meta['build_seconds']:.0f} s"
    return f"databases reused from bench/.cache, first built in {first:.0f} s"


def _load_note(meta: Mapping[str, Any]) -> str:
    load = meta.get("load_average")
    if not load:
        return ""
    return f"; load average {load['search_start']} when searching started, {load['search_end']} when it ended"


def markdown_section(report: Mapping[str, Any]) -> str:
    meta = report["meta"]
    anchor = report.get("anchor")
    checks = report.get("federation", [])
    failed = [c for c in checks if not c["ok"]]
    parts = [
        SECTION,
        "",
        "Retrieval quality measured by `make quality` (`bench/quality.py`), written by the benchmark itself.",
        "",
        f"- Dataset: {meta['dataset']} ({meta['documents']} documents, {meta['chunks']} chunks, "
        f"{meta['queries']} judged queries); model {meta['model']}; chunk size {meta['chunk_size']} tokens.",
        f"- Every query through `HaikuRAG.search(limit={meta['limit']})`; results deduplicated to documents "
        "(a document ranks at its best chunk). Layouts split the corpus by a fixed hash of the document id.",
        f"- Run on {meta['date']}, {meta['machine']}; wall time {meta['wall_seconds']:.0f} s "
        f"(searching {meta['search_seconds']:.0f} s; {_build_note(meta)}){_load_note(meta)}.",
    ]
    if anchor is not None:
        parts.append(
            f"- Sanity anchor: one-database vector nDCG@10 {anchor['measured_ndcg@10']:.4f} against the published "
            f"{anchor['published_ndcg@10']:.3f} ({anchor['delta']:+.4f}, "
            f"{'within' if anchor['ok'] else 'OUTSIDE'} ±{ANCHOR_TOLERANCE})"
            + "".join(f"; {name} (no database) {v:.4f}" for name, v in anchor.get("exact_ndcg@10", {}).items())
            + "."
        )
    if checks:
        verdict = (
            f"every search type within ±{FEDERATION_TOLERANCE} of one database"
            if not failed
            else "OUTSIDE the tolerance: " + ", ".join(f"{c['arm']}/{c['layout']} {c['delta_ndcg@10']:+.4f}" for c in failed)
        )
        parts.append(f"- Federation (default fusion, nDCG@10): {verdict}.")
    parts += [
        "- Rules (docs/fusion.md): the defaults are `vector`, `fts` and `hybrid`; the original rules are kept for "
        "comparison: each database's own BM25 statistics (`search.fts_idf: local`) and hybrid re-sorted by "
        "cosine (`search.fusion: cosine`). Over one database every rule is that database's own search.",
        "",
        results_table(report["results"]),
        "",
    ]
    return "\n".join(parts)
