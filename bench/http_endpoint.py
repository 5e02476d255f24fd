"""What serve's HTTP endpoint costs: RSS and ingest throughput with it off and on, in one run.

    python bench/http_endpoint.py [--docs 300] [--rounds 2] [--scrape-every 1.0]

Each round starts ``haiku-ingester serve`` twice over a fresh copy of a folder of
``--docs`` short markdown notes (the start-up sweep queues them all): once with
``ingester.http`` off, once on, with a client scraping ``/metrics`` and asking
``/health/ready`` every ``--scrape-every`` seconds (far more often than
Prometheus's usual 15–60 s). Reported per start: notes per second from
``ready`` to the last ``job done``, the daemon's RSS once idle after the ingest
and its peak (VmHWM). Off and on alternate, so load from elsewhere on the
machine falls on both. The last scrape of the last "on" start is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _status_mib(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run(docs: int, *, http: bool, scrape_every: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="http-endpoint-") as tmp:
        root = Path(tmp)
        notes = root / "notes"
        notes.mkdir()
        for i in range(docs):
            (notes / f"n{i}.md").write_text(
                f"# Note {i}\n\nSparrows, owls and finches seen on walk {i}; the weather was mild and "
                f"the river high after the rain of the week before.\n"
            )
        port = _free_port()
        config = root / "config.yaml"
        config.write_text(json.dumps({
            "storage": {"data_dir": str(root / "data")},
            "lancedb": {"databases": {"notes": str(root / "notes.lancedb")}},
            "ingester": {
                "databases": {"notes": {"sources": [{"type": "fs", "root": str(notes)}]}},
                "http": {"enabled": http, "port": port},
            },
        }))  # fmt: skip
        env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
        daemon = subprocess.Popen(
            [sys.executable, "-m", "haiku.ingester.cli", "--config", str(config), "--log-format", "json", "serve"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        done, ready_at, last_done = threading.Event(), [0.0], [0.0]
        finished = [0]

        def read_log() -> None:
            assert daemon.stderr is not None
            for line in daemon.stderr:
                if '"event": "ready"' in line:
                    ready_at[0] = time.monotonic()
                if '"job done"' in line:
                    finished[0] += 1
                    last_done[0] = time.monotonic()
                    if finished[0] >= docs:
                        done.set()

        threading.Thread(target=read_log, daemon=True).start()
        scrapes, last_scrape = [0], [b""]

        def scrape() -> None:
            while not done.is_set():
                for path in ("/metrics", "/health/ready"):
                    try:
                        with _NO_PROXY.open(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
                            body = response.read()
                        if path == "/metrics":
                            last_scrape[0] = body
                            scrapes[0] += 1
                    except OSError:
                        pass
                time.sleep(scrape_every)

        if http:
            threading.Thread(target=scrape, daemon=True).start()
        done.wait(900)
        time.sleep(3)
        if http:
            with _NO_PROXY.open(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
                last_scrape[0] = response.read()
        result = {
            "http": http,
            "jobs_done": finished[0],
            "notes_per_s": round(docs / max(last_done[0] - ready_at[0], 1e-9), 1),
            "idle_rss_after_mib": round(_status_mib(daemon.pid, "VmRSS")),
            "peak_rss_mib": round(_status_mib(daemon.pid, "VmHWM")),
            "scrapes": scrapes[0],
        }
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=120)
        return {**result, "scrape": last_scrape[0].decode()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--scrape-every", type=float, default=1.0)
    args = parser.parse_args()
    print(f"{args.docs} notes, load average {os.getloadavg()[0]:.2f}")
    results: dict[bool, list[dict]] = {False: [], True: []}
    scrape = ""
    for _ in range(args.rounds):
        for http in (False, True):
            result = run(args.docs, http=http, scrape_every=args.scrape_every)
            scrape = result.pop("scrape") or scrape
            results[http].append(result)
            print(json.dumps(result))
    for http, runs in results.items():
        print(
            f"endpoint {'on ' if http else 'off'}: median {statistics.median(r['notes_per_s'] for r in runs)} notes/s, "
            f"idle RSS {statistics.median(r['idle_rss_after_mib'] for r in runs)} MiB, "
            f"peak {statistics.median(r['peak_rss_mib'] for r in runs)} MiB"
        )
    print(f"load average {os.getloadavg()[0]:.2f}")
    print("--- the last scrape ---")
    print(scrape)


if __name__ == "__main__":
    main()
