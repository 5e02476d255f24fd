"""The reprocess scenario of bench/ingest.py: SciFact re-processed after a chunk_size change.

The SciFact sample of the full scenario (one markdown file per document in
three folders, three databases) is ingested with ``run-batch`` at the default
``processing.chunk_size`` (256) and copied (databases and queue); the
configuration is changed to 128, and ``haiku-ingester reprocess --db-name dbN``
runs for each database (start-up and model load included, one process per
database), then ``haiku-ingester reprocess --all`` re-processes the copy in one
process (the model and the conversion workers start once). Reported: the time
of each, the documents re-processed, the chunks they became, and how many chunk
texts were embedded or kept their vector. The baseline, in the same run: a
fresh ``run-batch`` of the same files at 128 into new databases and a new
queue (what re-ingesting from scratch costs).

    python bench/ingest.py --scenario reprocess [--scifact PATH] [--limit N] [--json OUT]
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

NEW_CHUNK_SIZE = 128


def with_chunk_size(config: Path, size: int, *, suffix: str = "") -> Path:
    """The config with ``processing.chunk_size`` set; with ``suffix``, new databases and queue beside it."""
    import yaml

    raw = yaml.safe_load(config.read_text())
    raw["processing"] = {"chunk_size": size}
    target = config
    if suffix:
        raw["storage"]["data_dir"] += suffix
        raw["lancedb"]["databases"] = {
            name: location.replace(".lancedb", f"{suffix}.lancedb") for name, location in raw["lancedb"]["databases"].items()
        }
        target = config.with_name(f"{config.stem}{suffix}.yaml")
    target.write_text(yaml.safe_dump(raw))
    return target


def copy_of(config: Path, suffix: str) -> Path:
    """A copy of the config's databases and queue, and a config naming them (the same source folders)."""
    import yaml

    raw = yaml.safe_load(config.read_text())
    shutil.copytree(raw["storage"]["data_dir"], raw["storage"]["data_dir"] + suffix)
    for location in raw["lancedb"]["databases"].values():
        shutil.copytree(location, location.replace(".lancedb", f"{suffix}.lancedb"))
    return with_chunk_size(config, raw.get("processing", {}).get("chunk_size", 256), suffix=suffix)


def run_reprocess_scenario(root: Path, documents: int, config: Path, run: Callable[..., dict]) -> dict:
    import yaml

    names = sorted(yaml.safe_load(config.read_text())["ingester"]["databases"])
    load_before = os.getloadavg()[0]
    first = run(config)
    print(f"ingest at 256: {first['summary']} in {first['seconds']:.1f}s, {first['chunks']} chunks", flush=True)
    copy = copy_of(config, "-all")

    with_chunk_size(config, NEW_CHUNK_SIZE)
    reports, runs = [], []
    for name in names:
        result = run(config, ("reprocess", "--db-name", name, "--json"))
        runs.append(result)
        reports.append(json.loads(result["summary"]))
        print(f"reprocess {name}: {reports[-1]['jobs']['written']} documents in {result['seconds']:.1f}s", flush=True)
    with_chunk_size(copy, NEW_CHUNK_SIZE)
    together = run(copy, ("reprocess", "--all", "--json"))
    together_reports = json.loads(together["summary"])["databases"]
    print(f"reprocess --all: {sum(r['jobs']['written'] for r in together_reports)} documents in "
          f"{together['seconds']:.1f}s", flush=True)
    fresh = run(with_chunk_size(config, NEW_CHUNK_SIZE, suffix="-fresh"))
    print(f"fresh ingest at {NEW_CHUNK_SIZE}: {fresh['summary']} in {fresh['seconds']:.1f}s", flush=True)

    total = sum(r["seconds"] for r in runs)
    jobs = {key: sum(report["jobs"][key] for report in reports) for key in ("written", "chunks", "embedded", "reused")}
    return {
        "scenario": "reprocess",
        "documents": documents,
        "chunk_size": {"before": 256, "after": NEW_CHUNK_SIZE},
        "ingest_s": round(first["seconds"], 2),
        "ingest_chunks": first["chunks"],
        "reprocess_s": round(total, 2),
        "reprocess_s_per_database": [round(r["seconds"], 2) for r in runs],
        "reprocess_cpu_s": round(sum(r["cpu_seconds"] for r in runs), 1),
        "reprocess_documents": jobs["written"],
        "reprocess_chunks": jobs["chunks"],
        "reprocess_embedded": jobs["embedded"],
        "reprocess_reused": jobs["reused"],
        "reprocess_documents_per_s": round(jobs["written"] / total, 2) if total else None,
        "recorded": all(report["recorded"] for report in reports),
        "reprocess_all_s": round(together["seconds"], 2),
        "reprocess_all_cpu_s": round(together["cpu_seconds"], 1),
        "reprocess_all_documents": sum(r["jobs"]["written"] for r in together_reports),
        "reprocess_all_embedded": sum(r["jobs"]["embedded"] for r in together_reports),
        "reprocess_all_recorded": all(r["recorded"] for r in together_reports),
        "reprocess_all_peak_rss_mib": round(together["peak_rss_mib"], 1),
        "fresh_ingest_s": round(fresh["seconds"], 2),
        "fresh_ingest_cpu_s": round(fresh["cpu_seconds"], 1),
        "fresh_ingest_chunks": fresh["chunks"],
        "reprocess_pct_of_fresh_ingest": round(100 * total / fresh["seconds"], 1),
        "returncodes": [first["returncode"], *(r["returncode"] for r in runs), together["returncode"], fresh["returncode"]],
        "load_average_before": round(load_before, 2),
        "load_average_after": round(os.getloadavg()[0], 2),
        "workdir": str(root),
    }
