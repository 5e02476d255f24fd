"""The ingester's memory while it OCRs scanned PDFs (docs/ingester.md, "Memory").

Writes N scanned PDFs (A4 pages of text rendered to an image, no text layer;
bench/ocr.py's pages) into one folder and ingests them with ``run-batch`` and
``worker_count: 2``, sampling the process tree (the daemon and its conversion
workers) every 0.2 s: the peak of the summed RSS, and each process's own peak
(VmHWM). The bound to hold: the tree under 1.5 GiB. After each document, the
RSS of the worker that converted it (the first sample after the pool's
``converted`` log line): whether a worker gives back OCR's memory, and how many
workers the run started (a worker replaced after a scan counts again).

``--workers``: the case run-batch reaches only when conversion is the
bottleneck, forced: a conversion pool of two workers, both started, converts two
of the scanned PDFs at once, and the pool's tree (this process and the two
workers) is sampled the same way; then each worker converts a small markdown
file (a replaced worker has started by then) and its RSS is read: what the
workers hold, ready for the next file, after the scans.

    python bench/ocr_memory.py [--files 4] [--pages 2] [--workers] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from datetime import datetime

from ingest import TreeMemory, run_batch
from ocr import scanned_pdf

BOUND_MIB = 1536


def write_world(root: Path, files: int, pages: int) -> Path:
    import yaml

    folder = root / "scans"
    folder.mkdir(parents=True)
    data = scanned_pdf(pages)
    for number in range(files):
        (folder / f"scan-{number}.pdf").write_bytes(data)
    config = {
        "storage": {"data_dir": str(root / "data")},
        "lancedb": {"databases": {"scans": str(root / "scans.lancedb")}},
        "ingester": {
            "databases": {"scans": {"sources": [{"root": str(folder)}]}},
            "workers": {"worker_count": 2},
        },
    }
    path = root / "haiku.rag.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


async def two_workers(files: int, pages: int) -> dict:
    from haiku.core.embedders import local_model_path
    from haiku.ingester.pipeline.pool import ConversionPool

    data = scanned_pdf(pages)
    pool = ConversionPool(size=2, initial=2, tokenizer_dir=local_model_path(), chunk_size=256, timeout_s=3600)
    await pool.start()
    memory = TreeMemory(os.getpid())
    warm = b"# Warm\n\nup\n"
    seen: set[int] = set()
    try:
        await asyncio.gather(*(pool.convert(name="warm.md", fmt="md", data=warm) for _ in range(2)))
        seen.update(pool.pids)
        at_rest = sorted(_rss_mib(pid) for pid in pool.pids)
        memory.start()
        loop = asyncio.get_running_loop()
        started = loop.time()
        await asyncio.gather(*(pool.convert(name=f"scan-{n}.pdf", fmt="pdf", data=data) for n in range(files)))
        seconds = loop.time() - started
        seen.update(pool.pids)
        await asyncio.gather(*(pool.convert(name="next.md", fmt="md", data=warm) for _ in range(2)))
        seen.update(pool.pids)
        after = sorted(_rss_mib(pid) for pid in pool.pids)
    finally:
        memory.stop()
        await pool.close()
    return {
        "mode": "two workers",
        "files": files,
        "pages_per_file": pages,
        "seconds": round(seconds, 1),
        "tree_peak_rss_mib": round(memory.peak_rss_kib / 1024, 1),
        "peak_by_process_mib": sorted((round(v / 1024) for v in memory.peak_by_process.values()), reverse=True),
        "worker_rss_at_rest_mib": at_rest,
        "worker_rss_after_scans_mib": after,
        "workers_started": len(seen),
    }


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def _peak_mib(series: dict[int, list[tuple[float, int]]], pids: list[int]) -> int:
    """The highest RSS sampled of these processes, each on its own."""
    return round(max((kib for pid in pids for _, kib in series.get(pid, [])), default=0) / 1024)


def at_tree_peak(series: dict[int, list[tuple[float, int]]], daemon: int) -> dict:
    """Each process's RSS in the sample where the tree's summed RSS was highest."""
    samples: dict[float, dict[int, int]] = {}
    for pid, points in series.items():
        for t, kib in points:
            samples.setdefault(t, {})[pid] = kib
    peak = max(samples.values(), key=lambda sample: sum(sample.values()), default={})
    return {
        "daemon": round(peak.get(daemon, 0) / 1024),
        "workers": sorted((round(kib / 1024) for pid, kib in peak.items() if pid != daemon), reverse=True),
    }


def rss_after_documents(log: Path, series: dict[int, list[tuple[float, int]]]) -> list[dict]:
    """For each ``converted`` line of the run's log: the file and its worker's RSS in the next sample."""
    out = []
    for line in log.read_text().splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("event") != "converted" or "worker_pid" not in event:
            continue
        at = datetime.fromisoformat(event["timestamp"].replace("Z", "+00:00")).timestamp()
        samples = series.get(event["worker_pid"], [])
        later = [kib for t, kib in samples if t >= at]
        # None: the worker had exited by the next sample (retired after the file, replaced)
        rss = round(later[0] / 1024) if later and samples[-1][0] > at + 0.5 else None
        out.append({"file": event["file"], "worker": event["worker_pid"], "rss_mib": rss})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--pages", type=int, default=2)
    parser.add_argument("--workers", action="store_true", help="two workers converting at once, no daemon")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if args.workers:
        report = asyncio.run(two_workers(args.files, args.pages))
        report["loadavg"] = Path("/proc/loadavg").read_text().split()[0]
        print(json.dumps(report, indent=2))
        if args.json:
            args.json.write_text(json.dumps(report, indent=2) + "\n")
        return 0
    root = Path(tempfile.mkdtemp(prefix="haiku-bench-ocr-memory-"))
    load_before = Path("/proc/loadavg").read_text().split()[0]
    result = run_batch(write_world(root, args.files, args.pages), ("--log-level", "debug", "run-batch"), series=True)
    series = result.pop("rss_series")
    after = rss_after_documents(Path(result["log"]), series)
    workers = {a["worker"] for a in after}
    report = {
        "files": args.files,
        "pages_per_file": args.pages,
        "returncode": result["returncode"],
        "summary": result["summary"],
        "seconds": round(result["seconds"], 1),
        "pages_per_s": round(args.files * args.pages / result["seconds"], 3),
        "tree_peak_rss_mib": round(result["peak_rss_mib"], 1),
        "tree_peak_pss_mib": round(result["peak_pss_mib"], 1),
        "peak_by_process_mib": result["peak_by_process_mib"],
        "processes": result["processes"],
        "workers_started": len(workers),
        "at_tree_peak_mib": at_tree_peak(series, result["pid"]),
        "daemon_peak_rss_mib": _peak_mib(series, [result["pid"]]),
        "worker_peak_rss_mib": sorted((_peak_mib(series, [pid]) for pid in workers), reverse=True),
        "worker_rss_after_each_document_mib": [a["rss_mib"] for a in after],
        "under_bound": result["peak_rss_mib"] < BOUND_MIB,
        "loadavg_before": load_before,
        "loadavg_after": Path("/proc/loadavg").read_text().split()[0],
    }
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0 if result["returncode"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
