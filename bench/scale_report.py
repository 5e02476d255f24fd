"""The "## Scale" section of docs/benchmarks.md, from one run's results (bench/scale.py)."""

from __future__ import annotations

from typing import Any

from bench.scale_maintenance import report_lines as maintenance_lines
from bench.scale_maintenance import target_lines as maintenance_targets

SECTION = "## Scale"
# Growth targets (docs/benchmarks.md, "## Scale"), from the smallest size to the largest.
SEARCH_GROWTH_TARGET = 3.0
WRITE_GROWTH_TARGET = 2.0
RECALL_TARGET = 0.95
COLD_TWO_TARGET = 1.5


def _pair(row: dict[str, float]) -> str:
    return f"{row['p50_ms']:.1f} / {row['p95_ms']:.1f}"


def _table(intro: str, columns: list[str], rows: list[list[str]]) -> list[str]:
    """A markdown table under its introduction; numbers right-aligned, a first column of labels left."""
    align = "|---|" if columns[0] == "selection" else "|---:|"
    return ["", intro, "", "| " + " | ".join(columns) + " |", align + "---:|" * (len(columns) - 1),
            *("| " + " | ".join(row) + " |" for row in rows)]


def _met(ok: bool) -> str:
    return "met" if ok else "**missed**"


def report(results: dict[str, Any], set25: dict[str, Any] | None, meta: dict[str, Any]) -> str:
    sizes = list(results)
    lines = [
        SECTION,
        "",
        f"`python bench/scale.py --sizes {meta['sizes']}` ({meta['date']}, {meta['cpus']} cores shared with other "
        f"work: load average {meta['load_start']} at the start, {meta['load_end']} at the end, "
        f"{meta.get('load_mean', '?')} on average; {meta['total_s'] / 60:.0f} minutes in all; "
        f"{meta['queries']} judged SciFact queries with their real query vectors; derived chunks, 8 a document, "
        "one database per size; vector index built by `create-index`). Raw figures: "
        "`bench/results/scale.json`.",
    ]
    lines += _table(
        "Search, one database, warm (ms):",
        ["chunks", "vector p50 / p95", "fts p50 / p95", "hybrid p50 / p95", "recall@10 (shipped defaults)"],
        [[f"{int(size):,}", _pair(row["search"]["vector"]), _pair(row["search"]["fts"]),
          _pair(row["search"]["hybrid"]), f"{row['search']['recall'][0]['recall_at_10']:.3f}"]
         for size, row in results.items()],
    )
    settings = [(r["nprobes"], r["refine_factor"]) for r in results[sizes[0]]["search"]["recall"]]
    lines += _table(
        "Recall@10 of the indexed vector search against exact search over the same rows, and its p50, "
        "by setting (nprobes / refine_factor; the first is the shipped default):",
        ["chunks", *(f"{n} / {r}" for n, r in settings)],
        [[f"{int(size):,}", *(f"{r['recall_at_10']:.3f} ({r['p50_ms']:.1f} ms)" for r in row["search"]["recall"])]
         for size, row in results.items()],
    )
    lines += _table(
        "Building, writing and memory (a write is one batch of 64 documents, 512 chunks, through "
        "`Store.upsert_documents` with its index refresh; 33 batches one after another, so one of them "
        "compacts; peak RSS each in a process of its own):",
        ["chunks", "bulk load s", "index build s", "index build peak RSS MiB", "write p50 s", "write max s",
         "search process peak RSS MiB"],
        [[f"{int(size):,}", f"{row['build_s']:.0f}", f"{row['index']['seconds']:.1f}",
          str(row["index"]["peak_rss_mib"]), f"{row['write']['p50_s']:.2f}", f"{row['write']['max_s']:.2f}",
          str(row["search_rss"]["peak_rss_mib"])] for size, row in results.items()],
    )
    lines += _table(
        "Vacuum after those writes (compaction, indexes merged into one, old versions dropped at the configured "
        "retention), in one process, while another process searches (hybrid, then reads the top hit's document "
        "whole) from start to end:",
        ["chunks", "vacuum s", "vacuum peak RSS MiB", "reader queries answered", "errors", "partial documents"],
        [[f"{int(size):,}", f"{row['vacuum']['seconds']:.1f}", str(row["vacuum"]["peak_rss_mib"]),
          str(row["vacuum"]["reader"]["answered"]), str(row["vacuum"]["reader"]["errors"]),
          str(row["vacuum"]["reader"]["partial"])] for size, row in results.items()],
    )
    lines += maintenance_lines(results)
    if set25 is not None:
        one = set25["one"]
        labels = (("one", "one database"), ("two", "`sources=[two of them]`"), ("all", "all 25"))
        lines += _table(
            f"{set25['databases']} databases of {set25['chunks_each']:,} chunks in one configuration file "
            "(flat vector search, no vector index), through the client: the first hybrid query of a fresh "
            "process (encoder loaded beforehand, not timed; opening included), median of "
            f"{set25['rounds']} processes, then the warm p50 of 30 more; RSS with the databases open:",
            ["selection", "cold first query ms", "ratio to one", "warm p50 ms", "ratio to one", "RSS open MiB"],
            [[label, f"{set25[key]['cold_ms']:.0f}", f"{set25[key]['cold_ms'] / one['cold_ms']:.2f}×",
              f"{set25[key]['warm_p50_ms']:.0f}", f"{set25[key]['warm_p50_ms'] / one['warm_p50_ms']:.2f}×",
              str(set25[key]["rss_open_mib"])] for key, label in labels],
        )
    lines += ["", "Targets:", "", *_targets(results, set25)]
    if len(sizes) > 1:
        lines += ["", *_growth(results, set25)]
    return "\n".join(lines) + "\n"


def _growth(results: dict[str, Any], set25: dict[str, Any] | None) -> list[str]:
    """What grows and why, with this run's figures."""
    sizes = list(results)
    first, last = results[sizes[0]], results[sizes[-1]]
    small, large = f"{int(sizes[0]):,}", f"{int(sizes[-1]):,}"

    def p50(row: dict[str, Any], kind: str) -> str:
        return f"{row['search'][kind]['p50_ms']:.0f} ms"

    out = [
        "What grows and why:",
        "",
        f"- Vector search ({p50(first, 'vector')} at {small} chunks, {p50(last, 'vector')} at {large}): the index "
        "has one partition per 8,192 rows and a query scans the 40 partitions nearest to it, so up to 320k "
        "chunks every quantised vector is scanned and at a million about a third; then 500 candidates are "
        "re-ranked with their exact vectors, a cost that does not grow.",
        f"- Full-text search ({p50(first, 'fts')} → {p50(last, 'fts')}): the posting lists of the query's words "
        "lengthen with the rows. Hybrid runs both and fuses them "
        f"({p50(first, 'hybrid')} → {p50(last, 'hybrid')}).",
        f"- Writes stay flat (median {first['write']['p50_s']:.2f} s → {last['write']['p50_s']:.2f} s): the "
        "index refresh after a write indexes only the batch (a delta beside each index), and the compaction "
        "every 32 writes merges only the small fragments writes leave, so neither touches the bulk of the "
        "database. The slowest write of the 33 is the one that compacts (and merges the deltas first); before "
        "this change, 36 such writes into the 100k database (a 2-core machine under load) took 0.1 s each but "
        "9.2 s for the one whose index refresh rewrote the whole full-text index, and 14.7 s for the one "
        "whose compaction rewrote the whole table; both grow with the database.",
        f"- Vacuum grows with the database ({first['vacuum']['seconds']:.0f} s → {last['vacuum']['seconds']:.0f} s): "
        "it is where the whole data and every index are rewritten (deltas merged into one index, all fragments "
        "compacted). Readers keep answering meanwhile (the table above), but a vacuum holds the writer lock, "
        "so writes wait for it: only an explicit `vacuum` does this. The ingester's auto-maintenance, after "
        "writes and on stop, does only the bounded part in steps that release the lock between two "
        "(docs/storage.md, \"Auto-maintenance\"), so a write waits for one step at most (the table of "
        "auto-maintenance above).",
        f"- Index builds ({first['index']['seconds']:.1f} s → {last['index']['seconds']:.1f} s) grow with the rows: "
        "k-means on a sample, then every vector assigned and quantised.",
        f"- A search process's memory ({first['search_rss']['peak_rss_mib']} → {last['search_rss']['peak_rss_mib']} "
        "MiB peak) grows with the index data LanceDB caches: the quantised vectors of the partitions searched "
        "(384 bytes a chunk) and the full-text posting lists.",
    ]
    if set25 is not None:
        out.append(
            f"- Over 25 databases a query searches each one (vector and full-text) and, to fuse full-text "
            f"scores fairly, counts each query word in each database (the federation's IDF, docs/fusion.md; "
            f"counts are cached per database version): warm p50 {set25['warm_all_over_one']:.1f}× one "
            f"database's, on two cores. A query naming two databases opens only those two, so its cold first "
            f"query costs what one database's does ({set25['cold_two_over_one']:.2f}×)."
        )
    return out


def _targets(results: dict[str, Any], set25: dict[str, Any] | None) -> list[str]:
    sizes = list(results)
    first, last = results[sizes[0]], results[sizes[-1]]
    span = f"{int(sizes[0]):,} to {int(sizes[-1]):,} chunks"
    out = []
    recall = last["search"]["recall"][0]["recall_at_10"]
    out.append(f"- recall@10 ≥ {RECALL_TARGET} at the shipped defaults, at {int(sizes[-1]):,} chunks: "
               f"{recall:.3f}, {_met(recall >= RECALL_TARGET)}.")
    if len(sizes) > 1:
        for kind in ("vector", "hybrid"):
            growth = last["search"][kind]["p50_ms"] / first["search"][kind]["p50_ms"]
            out.append(f"- {kind} p50 growth from {span} ≤ {SEARCH_GROWTH_TARGET:.0f}×: {growth:.2f}×, "
                       f"{_met(growth <= SEARCH_GROWTH_TARGET)}.")
        for key, label in (("p50_s", "median"), ("max_s", "slowest")):
            growth = last["write"][key] / first["write"][key]
            out.append(f"- a 64-document write ({label} of 33) growth from {span} ≤ {WRITE_GROWTH_TARGET:.0f}×: "
                       f"{growth:.2f}×, {_met(growth <= WRITE_GROWTH_TARGET)}.")
    reader = last["vacuum"]["reader"]
    out.append(f"- a reader during vacuum at {int(sizes[-1]):,} chunks: {reader['answered']} queries answered, "
               f"{reader['errors']} errors, {reader['partial']} partial documents, "
               f"{_met(reader['errors'] == 0 and reader['partial'] == 0 and reader['answered'] > 0)}.")
    out += maintenance_targets(results)
    if set25 is not None:
        ratio = set25["cold_two_over_one"]
        out.append(f"- cold first query over two of 25 databases ≤ {COLD_TWO_TARGET}× one database's: "
                   f"{ratio:.2f}×, {_met(ratio <= COLD_TWO_TARGET)}.")
    return out
