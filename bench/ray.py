"""The Ray engine against the local one: the SciFact sample through `run-batch`, interleaved.

One Ray head node on 127.0.0.1 (this machine's cores) serves every Ray run;
the runs alternate local, Ray, local, Ray… over fresh copies of the same
folders (bench/ingest.py writes them: three databases), so that a load that
changes during the benchmark weighs on both engines alike. Reported per
engine: the median wall seconds of the whole command (start-up, the Ray
driver's connection, docling and the model loading in the workers included),
chunks/s, and the CPU seconds of the ingester's own process tree; then the
Ray / local ratio of the wall seconds (target: at most 1.25 on one machine).

    python bench/ray.py --scifact ../shared/data/scifact [--limit 300] [--rounds 2]
    python bench/ray.py ... --gpus-per-embedder 1     # on a machine with a GPU

Writes bench/results/ray.json and the "Ray engine" section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "tests" / "ingester"), str(REPO / "tests")]  # the tests' loopback cluster

from ray_cluster import RayCluster, ray_env  # noqa: E402

from docs_section import write_section  # noqa: E402
from ingest import FOLDERS, run_batch, write_config, write_corpus  # noqa: E402


def with_engine(config: Path, engine: dict) -> Path:
    import yaml

    data = yaml.safe_load(config.read_text())
    data["ingester"]["engine"] = engine
    config.write_text(yaml.safe_dump(data))
    return config


def one_run(corpus: Path, workdir: Path, limit: int, engine: dict) -> dict:
    root = Path(tempfile.mkdtemp(prefix=f"{engine['type']}-", dir=workdir))
    write_corpus(corpus, root, limit)
    result = run_batch(with_engine(write_config(root), engine))
    shutil.rmtree(root, ignore_errors=True)
    if result["returncode"] != 0:
        raise SystemExit(f"run-batch ({engine['type']}) failed: {result['summary']} (log {result['log']})")
    return {key: result[key] for key in ("seconds", "cpu_seconds", "steady_seconds", "chunks", "peak_rss_mib")}


def summary(runs: list[dict]) -> dict:
    seconds = statistics.median(r["seconds"] for r in runs)
    chunks = runs[0]["chunks"]
    steady = [r["chunks"] / r["steady_seconds"] for r in runs if r["steady_seconds"]]
    return {
        "runs": runs,
        "median_seconds": round(seconds, 2),
        "chunks": chunks,
        "chunks_per_s": round(chunks / seconds, 2),
        "steady_chunks_per_s": round(statistics.median(steady), 2) if steady else None,
        "median_cpu_seconds": round(statistics.median(r["cpu_seconds"] for r in runs), 2),
    }


def section(result: dict) -> str:
    local, ray = result["local"], result["ray"]
    lines = [
        "## Ray engine",
        "",
        f"`python bench/ray.py` ({result['documents']} SciFact documents in {FOLDERS} databases, "
        f"{result['rounds']} interleaved rounds, {result['cpus']} CPUs, load average "
        f"{result['loadavg_before']} before and {result['loadavg_after']} after; {result['date']}). "
        "One Ray head node on this machine: the engine's overhead, not a cluster's speed-up "
        "(docs/scale-out.md).",
        "",
        "| Engine | Median wall s | Chunks/s (whole run) | Chunks/s (steady) | Ingester CPU s |",
        "|---|---|---|---|---|",
    ]
    for name, figures in (("local", local), (f"ray ({result['ray_engine']})", ray)):
        lines.append(
            f"| {name} | {figures['median_seconds']} | {figures['chunks_per_s']} | "
            f"{figures['steady_chunks_per_s']} | {figures['median_cpu_seconds']} |"
        )
    lines += [
        "",
        f"Ray / local wall time: **{result['ratio']}×** (target ≤ 1.25×). The Ray runs' CPU seconds are "
        "the ingester's own process tree (the Ray driver included); the cluster's workers are not its children.",
    ]
    if result.get("loaded"):
        lines += ["", "Measured on a shared, loaded machine: the figures swing with the load."]
        if result["ratio"] < 1:
            lines[-1] += (
                " Here the Ray runs came out faster: the cluster's workers run at normal priority and as more "
                "processes, so on contended cores they take a larger share of the CPU than the local engine's "
                "conversion workers (nice 10) and encoder thread. On an idle machine the ratio is the Ray "
                "engine's overhead (start-up, moving bytes and vectors between processes)."
            )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scifact", type=Path, default=REPO.parent / "shared" / "data" / "scifact")
    parser.add_argument("--limit", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--converters", type=int, default=2)
    parser.add_argument("--embedders", type=int, default=1)
    parser.add_argument("--gpus-per-embedder", type=float, default=0)
    parser.add_argument("--json", type=Path, default=REPO / "bench" / "results" / "ray.json")
    parser.add_argument("--docs", type=Path, default=REPO / "docs" / "benchmarks.md")
    parser.add_argument("--report-only", action="store_true", help="Rewrite the docs section from --json; run nothing.")
    args = parser.parse_args()
    if args.report_only:
        write_section(args.docs, section(json.loads(args.json.read_text())))
        return 0

    os.environ.update(ray_env())  # the ingester's Ray driver joins the loopback cluster
    corpus = args.scifact / "corpus.jsonl"
    workdir = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    cpus = os.cpu_count() or 1
    loadavg_before = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    cluster = RayCluster(num_cpus=cpus + args.embedders).start()
    engine = {
        "type": "ray",
        "address": cluster.address,
        "converters": args.converters,
        "embedders": args.embedders,
        "gpus_per_embedder": args.gpus_per_embedder,
    }
    runs: dict[str, list[dict]] = {"local": [], "ray": []}
    try:
        for _ in range(args.rounds):
            runs["local"].append(one_run(corpus, workdir, args.limit, {"type": "local"}))
            runs["ray"].append(one_run(corpus, workdir, args.limit, engine))
            print(json.dumps({k: v[-1] for k, v in runs.items()}), flush=True)
    finally:
        cluster.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    loadavg_after = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    local, ray = summary(runs["local"]), summary(runs["ray"])
    result = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": platform.machine(),
        "cpus": cpus,
        "documents": args.limit,
        "rounds": args.rounds,
        "ray_engine": f"converters {args.converters}, embedders {args.embedders}, "
        f"gpus_per_embedder {args.gpus_per_embedder:g}",
        "loadavg_before": loadavg_before,
        "loadavg_after": loadavg_after,
        "loaded": max(float(loadavg_before), float(loadavg_after)) > cpus * 0.75
        if "?" not in (loadavg_before, loadavg_after) else None,
        "local": local,
        "ray": ray,
        "ratio": round(ray["median_seconds"] / local["median_seconds"], 2),
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    write_section(args.docs, section(result))
    print(json.dumps({k: result[k] for k in ("ratio", "loadavg_before", "loadavg_after")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
