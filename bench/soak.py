"""Soak: ``haiku-ingester serve`` under a stream of file edits, its memory and queue sampled.

Writes ``--files`` small markdown notes into one folder, starts ``serve`` on
it (watching, one database), waits until the first ingest is done, then for
``--minutes`` edits, creates and deletes notes at ``--rate`` operations a
second (70 % edits, 15 % creations, 15 % deletions, so the folder keeps its
size). Every ``--sample-s`` it records the daemon's own resident memory
(``/proc/PID/statm``), the summed RSS of its process tree (the conversion
workers included) and the queue's depth (queued and claimed jobs). When the
stream stops it waits for the queue to drain, checks that the database holds
one document per file, and stops the daemon.

The report: the daemon's RSS when the stream started, the mean RSS of the
second and of the last third of the stream and the growth between those
two thirds (the target is at most 5 % over a 20-minute run: memory flat
after warm-up), the same with medians (the RSS swings by a few hundred MiB
with each batch the encoder and the writer handle, and the median is less
moved by where the peaks fall), what LanceDB's bounded caches held each
minute (from the daemon's ``memory`` debug line), the largest queue depth,
the operations done and the load average. Not part of ``make test``; run it by hand, under the benchmark lock:

    flock /tmp/haiku_bench.lock python bench/soak.py [--minutes 20] [--rate 3] [--json OUT]

(the other timing benchmarks take the lock themselves, see bench/bench_lock.py)

docs/benchmarks.md, "Soak", has the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

WORDS = (
    "harbour lantern meadow quartz river saddle timber violet walnut yarrow amber basil cinder delta ember "
    "falcon garnet heron indigo juniper kestrel lichen marble nutmeg orchid pebble quill russet sorrel thistle"
).split()


def note(rng: random.Random, number: int) -> str:
    paragraphs = [" ".join(rng.choices(WORDS, k=rng.randint(25, 60))).capitalize() + "." for _ in range(rng.randint(2, 5))]
    return f"# Note {number}\n\n" + "\n\n".join(paragraphs) + "\n"


def rss_mib(pid: int) -> float | None:
    try:
        pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def tree_rss_mib(pid: int) -> float:
    pending, total = [pid], 0.0
    while pending:
        current = pending.pop()
        total += rss_mib(current) or 0.0
        pending += children(current)
    return total


def queue_depth(queue: Path) -> int:
    if not queue.exists():
        return 0
    conn = sqlite3.connect(f"file:{queue}?mode=ro", uri=True, timeout=10)
    try:
        return conn.execute("SELECT COUNT(*) FROM jobs WHERE status IN ('queued', 'claimed')").fetchone()[0]
    except sqlite3.Error:
        return -1
    finally:
        conn.close()


def documents_in(queue: Path) -> int:
    conn = sqlite3.connect(f"file:{queue}?mode=ro", uri=True, timeout=10)
    try:
        return conn.execute("SELECT COUNT(*) FROM sync_state WHERE document_id IS NOT NULL").fetchone()[0]
    finally:
        conn.close()


def wait_for(predicate, timeout: float, interval: float = 1.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())


class Daemon:
    def __init__(self, config: Path, workdir: Path) -> None:
        script = Path(sys.executable).parent / "haiku-ingester"
        command = [str(script)] if script.exists() else [sys.executable, "-m", "haiku.ingester.cli"]
        self.notify = workdir / "notify.sock"
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(self.notify))
        self.log = (workdir / "serve.log").open("w")
        env = dict(
            os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
            NOTIFY_SOCKET=str(self.notify),
        )
        self.proc = subprocess.Popen(
            [*command, "--config", str(config), "--log-format", "json", "--log-level", "debug", "serve"],
            stdout=self.log, stderr=subprocess.STDOUT, env=env,
        )

    def wait_ready(self, timeout: float) -> bool:
        self.sock.settimeout(1.0)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                if b"READY=1" in self.sock.recv(4096):
                    return True
            except TimeoutError:
                continue
        return False

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(300)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.sock.close()
        self.log.close()
        return self.proc.returncode


def thirds(samples: list[dict], key: str, average=statistics.fmean) -> tuple[float, float]:
    """``average`` of ``key`` over the second and the last third of the samples."""
    n = len(samples)
    second = [s[key] for s in samples[n // 3 : 2 * n // 3]]
    last = [s[key] for s in samples[2 * n // 3 :]]
    return average(second), average(last)


def memory_lines(log: Path, since: float) -> list[dict]:
    """The daemon's ``memory`` debug lines (once a minute) logged after ``since`` (epoch seconds)."""
    from datetime import datetime

    lines = []
    for text in log.read_text().splitlines():
        if '"event": "memory"' not in text:
            continue
        event = json.loads(text)
        at = datetime.fromisoformat(event["timestamp"].replace("Z", "+00:00")).timestamp()
        if at >= since:
            lines.append({k: event.get(k) for k in ("rss_mib", "lance_cache_mib", "lance_cache_entries", "queued")})
    return lines


def soak(minutes: float, rate: float, files: int, sample_s: float, workdir: Path, seed: int) -> dict:
    rng = random.Random(seed)
    folder = workdir / "notes"
    folder.mkdir(parents=True)
    for number in range(files):
        (folder / f"note-{number:05d}.md").write_text(note(rng, number))
    queue = workdir / "data" / "ingester.db"
    config = workdir / "haiku.rag.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "storage": {"data_dir": str(workdir / "data")},
                "lancedb": {"databases": {"notes": str(workdir / "notes.lancedb")}},
                "ingester": {"databases": {"notes": {"sources": [{"type": "fs", "root": str(folder), "id": "notes"}]}}},
            }
        )
    )
    daemon = Daemon(config, workdir)
    result: dict = {"files": files, "rate_target": rate, "minutes": minutes, "load_start": os.getloadavg()}
    try:
        started = time.monotonic()
        if not daemon.wait_ready(600):
            raise RuntimeError(f"serve did not become ready; see {workdir / 'serve.log'}")
        if not wait_for(lambda: queue_depth(queue) == 0 and documents_in(queue) >= files, 1800, 2.0):
            raise RuntimeError("the first ingest did not finish")
        result["first_ingest_s"] = round(time.monotonic() - started, 1)
        pid = daemon.proc.pid
        result["rss_after_first_ingest_mib"] = round(rss_mib(pid) or 0, 1)
        present = sorted(folder.glob("*.md"))
        next_number = files
        samples: list[dict] = []
        ops = {"edit": 0, "create": 0, "delete": 0}
        stream_start = time.monotonic()
        stream_epoch = time.time()
        next_sample = stream_start
        next_op = stream_start
        end = stream_start + minutes * 60
        while time.monotonic() < end:
            now = time.monotonic()
            if now >= next_sample:
                samples.append(
                    {
                        "t_s": round(now - stream_start, 1),
                        "rss_mib": round(rss_mib(pid) or 0, 1),
                        "tree_rss_mib": round(tree_rss_mib(pid), 1),
                        "queue": queue_depth(queue),
                    }
                )
                next_sample += sample_s
            if now >= next_op:
                kind = rng.choices(("edit", "create", "delete"), weights=(70, 15, 15))[0]
                if kind == "delete" and len(present) > files // 2:
                    present.pop(rng.randrange(len(present))).unlink()
                elif kind == "create" or not present:
                    kind = "create"
                    path = folder / f"note-{next_number:05d}.md"
                    path.write_text(note(rng, next_number))
                    present.append(path)
                    next_number += 1
                else:
                    kind = "edit"
                    path = rng.choice(present)
                    path.write_text(note(rng, next_number))
                    next_number += 1
                ops[kind] += 1
                next_op += 1.0 / rate
            time.sleep(max(min(next_op, next_sample) - time.monotonic(), 0.0))
        stream_s = time.monotonic() - stream_start
        drained = wait_for(lambda: queue_depth(queue) == 0, 600, 2.0)
        time.sleep(5)  # the last watcher events are debounced
        drained = drained and wait_for(lambda: queue_depth(queue) == 0, 300, 2.0)
        second, last = thirds(samples, "rss_mib")
        median_second, median_last = thirds(samples, "rss_mib", statistics.median)
        tree_second, tree_last = thirds(samples, "tree_rss_mib")
        daemon.log.flush()
        memory = memory_lines(workdir / "serve.log", stream_epoch)
        result.update(
            {
                "ops": ops,
                "rate_done": round(sum(ops.values()) / stream_s, 2),
                "stream_s": round(stream_s, 1),
                "rss_stream_start_mib": samples[0]["rss_mib"],
                "rss_second_third_mib": round(second, 1),
                "rss_last_third_mib": round(last, 1),
                "rss_growth_pct": round(100 * (last - second) / second, 2),
                "rss_median_second_third_mib": round(median_second, 1),
                "rss_median_last_third_mib": round(median_last, 1),
                "rss_median_growth_pct": round(100 * (median_last - median_second) / median_second, 2),
                "lance_cache_mib": [m["lance_cache_mib"] for m in memory],
                "rss_end_mib": samples[-1]["rss_mib"],
                "tree_rss_second_third_mib": round(tree_second, 1),
                "tree_rss_last_third_mib": round(tree_last, 1),
                "queue_max": max(s["queue"] for s in samples),
                "drained": drained,
                "files_at_end": len(present),
                "documents_at_end": documents_in(queue),
                "load_end": os.getloadavg(),
                "samples": samples,
            }
        )
    finally:
        result["serve_exit"] = daemon.stop()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=20.0)
    parser.add_argument("--rate", type=float, default=3.0, help="file operations per second")
    parser.add_argument("--files", type=int, default=400)
    parser.add_argument("--sample-s", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workdir", type=Path, default=None, help="kept when given; else a temporary folder")
    parser.add_argument("--json", type=Path, default=None, help="write the result here")
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="haiku-soak-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        result = soak(args.minutes, args.rate, args.files, args.sample_s, workdir, args.seed)
    finally:
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    summary = {k: v for k, v in result.items() if k != "samples"}
    print(json.dumps(summary, indent=2))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
