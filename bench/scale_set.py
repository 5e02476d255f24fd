"""The scale benchmark's set of 25 databases of 10k chunks, in one configuration file (bench/scale.py).

Each database is derived like the others (``Corpus``) with a seed of its own,
bulk-loaded and cached under ``bench/.cache/scale/set-25``. Measured, each in
fresh processes (the encoder loaded first and not timed): the client's cold
first hybrid query over one database, over two (``sources=[two of them]``)
and over all 25, then their warm p50, and the client's memory with all 25 open.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

DATABASES = 25
CHUNKS = 10_000
ROUNDS = 3  # fresh processes per selection; the median cold query is kept
WARM = 30


def names() -> list[str]:
    return [f"set{k:02d}" for k in range(DATABASES)]


def config_file(root: Path) -> Path:
    """One configuration naming all 25 databases (written once, next to them)."""
    path = root / "haiku.yaml"
    config = {
        "storage": {"data_dir": str(root / "data"), "auto_vacuum": False},
        "lancedb": {"databases": {name: str(root / name / "scale.lancedb") for name in names()}},
    }
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


async def build_set(root: Path, corpus_for, build, log) -> float:
    """Every database of the set (cached ones reused); seconds spent building."""
    total = 0.0
    for k, name in enumerate(names()):
        total += await build(root / name, CHUNKS, corpus_for(k), quiet=True)
    log(f"  set of {DATABASES} databases ready ({total:.0f} s bulk loading, when first built)")
    return total


def _child(args: dict[str, Any]) -> dict[str, Any]:
    script = Path(__file__).resolve().parent / "scale_children.py"
    done = subprocess.run([sys.executable, str(script), "cold", json.dumps(args)], capture_output=True,
                          text=True, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-1500:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure_set(root: Path, queries: str, log) -> dict[str, Any]:
    path = config_file(root)
    selections = {"one": names()[:1], "two": names()[:2], "all": None}
    runs: dict[str, list[dict[str, Any]]] = {key: [] for key in selections}
    for round_ in range(ROUNDS):  # interleaved, so a burst of load hits every selection alike
        for key, sources in selections.items():
            runs[key].append(_child({"config": str(path), "sources": sources, "queries": queries, "warm": WARM}))
            log(f"  set, {key}, round {round_ + 1}: {runs[key][-1]}")
    out: dict[str, Any] = {"databases": DATABASES, "chunks_each": CHUNKS, "rounds": ROUNDS}
    for key, rows in runs.items():
        out[key] = {
            "cold_ms": round(statistics.median(r["cold_ms"] for r in rows), 1),
            "warm_p50_ms": round(statistics.median(r["warm_p50_ms"] for r in rows), 1),
            "rss_open_mib": round(statistics.median(r["rss_open_mib"] for r in rows)),
            "rss_before_open_mib": min(r["rss_before_open_mib"] for r in rows),
            "peak_rss_mib": max(r["peak_rss_mib"] for r in rows),
        }
    out["cold_two_over_one"] = round(out["two"]["cold_ms"] / out["one"]["cold_ms"], 2)
    out["cold_all_over_one"] = round(out["all"]["cold_ms"] / out["one"]["cold_ms"], 2)
    out["warm_all_over_one"] = round(out["all"]["warm_p50_ms"] / out["one"]["warm_p50_ms"], 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()
    repo = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(repo))
    from bench.bench_lock import alone

    scale = repo / "bench" / ".cache" / "scale"
    root, queries = scale / "set-25", scale / "queries"
    missing = [name for name in names() if not (root / name / "complete.json").exists()]
    if missing or not queries.with_suffix(".npy").exists():
        sys.exit(f"the set of {DATABASES} databases is not built under {root}: run bench/scale.py first")
    started = time.perf_counter()
    with alone(print):
        load_start = " ".join(f"{x:.2f}" for x in os.getloadavg())
        out = measure_set(root, str(queries), lambda line: print(line, flush=True))
        out["load_start"], out["load_end"] = load_start, " ".join(f"{x:.2f}" for x in os.getloadavg())
    out["minutes"] = round((time.perf_counter() - started) / 60, 1)
    text = json.dumps(out, indent=2)
    print(text)
    if args.json is not None:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
