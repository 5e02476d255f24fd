"""The ingester daemon's memory and CPU with each document encoder.

    python bench/daemon_memory.py [--docs 50] [--runtimes onnx torch]

For each ``embeddings.document_runtime``, starts ``haiku-ingester serve`` over
a folder of ``--docs`` short markdown notes and a fresh database, samples the
daemon's RSS every 0.2 s until every note's job is done (its ``job done`` log
lines), waits 5 s, and reports: the daemon's RSS once it has loaded the model
and before the first job finished ("idle, loaded"), its peak (VmHWM), its RSS
idle after the ingest, and the CPU seconds of the daemon and of its
conversion workers. The export is cached already (``haiku-rag
download-models``), as on any start after the first.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

PAGE = os.sysconf("SC_CLK_TCK")


def _status_mib(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / PAGE  # utime, stime


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def run(runtime: str, docs: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="daemon-memory-") as tmp:
        root = Path(tmp)
        notes = root / "notes"
        notes.mkdir()
        for i in range(docs):
            (notes / f"n{i}.md").write_text(
                f"# Note {i}\n\nSparrows, owls and finches seen on walk {i}; the weather was mild and "
                f"the river high after the rain of the week before.\n"
            )
        config = root / "config.yaml"
        config.write_text(json.dumps({
            "storage": {"data_dir": str(root / "data")},
            "lancedb": {"databases": {"notes": str(root / "notes.lancedb")}},
            "ingester": {"databases": {"notes": {"sources": [{"type": "fs", "root": str(notes)}]}}},
            "embeddings": {"document_runtime": runtime},
        }))
        env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
        daemon = subprocess.Popen(
            [sys.executable, "-m", "haiku.ingester.cli", "--config", str(config), "--log-format", "json", "serve"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
        )
        done = threading.Event()
        finished = [0]

        def read_log() -> None:
            assert daemon.stderr is not None
            for line in daemon.stderr:
                if '"job done"' in line:
                    finished[0] += 1
                    if finished[0] >= docs:
                        done.set()

        threading.Thread(target=read_log, daemon=True).start()
        loaded_rss, workers_cpu = 0.0, {}
        deadline = time.monotonic() + 600
        while not done.is_set() and time.monotonic() < deadline:
            if finished[0] == 0:
                loaded_rss = _status_mib(daemon.pid, "VmRSS")
            for child in _children(daemon.pid):
                try:
                    workers_cpu[child] = _cpu_s(child)
                except OSError:
                    pass
            time.sleep(0.2)
        time.sleep(5)
        result = {
            "runtime": runtime,
            "jobs_done": finished[0],
            "rss_before_first_job_mib": round(loaded_rss),
            "peak_rss_mib": round(_status_mib(daemon.pid, "VmHWM")),
            "idle_rss_after_mib": round(_status_mib(daemon.pid, "VmRSS")),
            "daemon_cpu_s": round(_cpu_s(daemon.pid), 1),
            "workers_cpu_s": round(sum(workers_cpu.values()), 1),
        }
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=60)
        return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=50)
    parser.add_argument("--runtimes", nargs="+", default=["onnx", "torch"])
    args = parser.parse_args()
    print(f"{args.docs} notes, load average {os.getloadavg()[0]:.2f}")
    for runtime in args.runtimes:
        print(json.dumps(run(runtime, args.docs)))
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
