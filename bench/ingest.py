"""Ingest benchmark: SciFact through `haiku-ingester run-batch` into three databases.

Writes the SciFact corpus (text = title + " " + text) as one markdown file per
document into three folders, runs ``run-batch`` over three databases, and
reports, from the same run:

* documents/s and chunks/s of the whole command (start-up and model load
  included) and of its steady state (first to last finished job);
* the peak RSS of the ingester's process tree (daemon + conversion workers),
  summed RSS and summed PSS (shared library pages counted once);
* the baseline: the raw encoder (``SentenceTransformer.encode``) on the same
  chunk texts with the same batch size, in a fresh process after the run, and
  the ratio of the pipeline's chunks/s to it; on a machine shared with other
  work the wall-clock ratio swings with the load, so the ratio of CPU seconds
  (raw encoder ÷ the ingester's whole process tree, start-up included) is
  reported beside it;
* a second run over the unchanged files, as a percentage of the first.

``--scenario edit`` runs the edit scenario instead (bench/ingest_edits.py):
one paragraph edited in each of 20 long documents, synced, against a full
re-ingest of the same documents. ``--scenario reprocess``
(bench/ingest_reprocess.py): the same SciFact sample ingested, then
``processing.chunk_size`` changed and every database re-processed.

    python bench/ingest.py --scifact ../shared/data/scifact [--limit 1000]
    python bench/ingest.py --scenario edit --json bench/results/ingest_edits.json
    python bench/ingest.py --scenario reprocess --json bench/results/reprocess.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FOLDERS = 3


def write_corpus(corpus: Path, root: Path, limit: int | None) -> int:
    count = 0
    folders = [root / f"folder{i}" for i in range(FOLDERS)]
    for folder in folders:
        folder.mkdir(parents=True)
    with corpus.open(encoding="utf-8") as handle:
        for line in handle:
            if limit is not None and count >= limit:
                break
            record = json.loads(line)
            text = f"{record.get('title', '')} {record.get('text', '')}".strip()
            (folders[count % FOLDERS] / f"{record['_id']}.md").write_text(text, encoding="utf-8")
            count += 1
    return count


def write_config(root: Path) -> Path:
    import yaml

    databases = {f"db{i}": str(root / f"db{i}.lancedb") for i in range(FOLDERS)}
    config = {
        "storage": {"data_dir": str(root / "data")},
        "lancedb": {"databases": databases},
        "ingester": {
            "databases": {f"db{i}": {"sources": [{"root": str(root / f"folder{i}")}]} for i in range(FOLDERS)}
        },
    }
    path = root / "haiku.rag.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


# --- memory of a process tree ----------------------------------------------------------------


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                out.extend(int(c) for c in handle.read().split())
    except OSError:
        pass
    return out


def _tree(pid: int) -> list[int]:
    pids, todo = [], [pid]
    while todo:
        current = todo.pop()
        pids.append(current)
        todo.extend(_children(current))
    return pids


def _kib(path: str, key: str) -> int:
    try:
        with open(path) as handle:
            for line in handle:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class TreeMemory(threading.Thread):
    """Samples the summed RSS and PSS of a process tree every 0.2 s; keeps the peaks
    (and with ``series`` each process's RSS over time: ``{pid: [(epoch seconds, KiB)]}``)."""

    def __init__(self, pid: int, *, series: bool = False) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.series: dict[int, list[tuple[float, int]]] | None = {} if series else None
        self.peak_rss_kib = 0
        self.peak_pss_kib = 0
        self.max_processes = 0
        self.peak_by_process: dict[int, int] = {}  # VmHWM (KiB) of each process seen
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            pids = _tree(self.pid)
            self.max_processes = max(self.max_processes, len(pids))
            for p in pids:
                hwm = _kib(f"/proc/{p}/status", "VmHWM")
                if hwm:
                    self.peak_by_process[p] = max(self.peak_by_process.get(p, 0), hwm)
            now, rss = time.time(), {p: _kib(f"/proc/{p}/status", "VmRSS") for p in pids}
            if self.series is not None:
                for p, kib in rss.items():
                    if kib:
                        self.series.setdefault(p, []).append((now, kib))
            self.peak_rss_kib = max(self.peak_rss_kib, sum(rss.values()))
            self.peak_pss_kib = max(self.peak_pss_kib, sum(_kib(f"/proc/{p}/smaps_rollup", "Pss") for p in pids))
            self._halt.wait(0.2)

    def stop(self) -> None:
        self._halt.set()
        self.join()


# --- runs -----------------------------------------------------------------------------------


def run_batch(config: Path, command: tuple[str, ...] = ("run-batch",), *, series: bool = False) -> dict:
    """``haiku-ingester COMMAND`` (run-batch by default) timed, with its process tree's memory
    (``series``: each process's RSS over time too, as ``rss_series``; see ``TreeMemory``)."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    script = Path(sys.executable).parent / "haiku-ingester"
    program = [str(script)] if script.exists() else [sys.executable, "-m", "haiku.ingester.cli"]
    log_path = config.parent / f"run-{time.time_ns()}.log"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [*program, "--config", str(config), "--log-format", "json", *command],
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            env=env,
        )
        memory = TreeMemory(proc.pid, series=series)
        memory.start()
        stdout, _ = proc.communicate()
        memory.stop()
    seconds = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # The ingester and the conversion workers it reaped: CPU is what a loaded machine leaves comparable.
    cpu_seconds = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    events = []
    for line in log_path.read_text().splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            pass
    done = [e for e in events if e.get("event") == "job done"]
    stamps = sorted(datetime.fromisoformat(e["timestamp"].replace("Z", "+00:00")).timestamp() for e in done)
    return {
        "returncode": proc.returncode,
        "summary": stdout.strip(),
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "steady_seconds": (stamps[-1] - stamps[0]) if len(stamps) > 1 else None,
        "steady_jobs": max(len(stamps) - 1, 0),
        "chunks": sum(e.get("chunks", 0) for e in done),
        "peak_rss_mib": memory.peak_rss_kib / 1024,
        "peak_pss_mib": memory.peak_pss_kib / 1024,
        "processes": memory.max_processes,
        "peak_by_process_mib": sorted((round(v / 1024) for v in memory.peak_by_process.values()), reverse=True),
        "log": str(log_path),
        **({"pid": proc.pid, "rss_series": memory.series} if series else {}),
    }


async def chunk_texts(root: Path) -> list[str]:
    from haiku.core.config import AppConfig
    from haiku.core.convert import embed_text
    from haiku.core.scope import DatabaseRef
    from haiku.core.store import Store

    texts: list[str] = []
    for i in range(FOLDERS):
        # Writable: the reader of every current chunk is the rebuild's, handed out with the writer.
        store = await Store.open(DatabaseRef.configured(f"db{i}", root / f"db{i}.lancedb"), AppConfig())
        try:
            async for batch in store.writer().rebuild.iter_chunk_batches():
                texts.extend(embed_text(c.headings, c.content) for c in batch)
        finally:
            await store.close()
    return texts


_RAW_ENCODER = """
import json, sys, time
sys.path.insert(0, sys.argv[3])
from bench.process_memory import peak_rss_mib
from sentence_transformers import SentenceTransformer
from haiku.core.embedders import local_model_path
texts = json.load(open(sys.argv[1]))
batch_size = int(sys.argv[2])
model = SentenceTransformer(local_model_path(), device="cpu", local_files_only=True)
model.encode(texts[:batch_size], batch_size=batch_size, show_progress_bar=False)  # warm
started, cpu = time.monotonic(), time.process_time()
model.encode(texts, batch_size=batch_size, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False)
seconds, cpu_seconds = time.monotonic() - started, time.process_time() - cpu
print(json.dumps({"seconds": seconds, "cpu_seconds": cpu_seconds, "peak_rss_mib": peak_rss_mib()}))
"""


def raw_encoder(texts: list[str], batch_size: int, workdir: Path) -> dict:
    """SentenceTransformer.encode on the texts in a fresh process: its time and its own peak RSS."""
    path = workdir / "chunk-texts.json"
    path.write_text(json.dumps(texts))
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    done = subprocess.run(
        [sys.executable, "-c", _RAW_ENCODER, str(path), str(batch_size), str(REPO)],
        capture_output=True, text=True, env=env, check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def report_scenario(figures: dict, args: argparse.Namespace, root: Path) -> int:
    """Print (and with --json write) a scenario's figures; 1 if one of its runs failed."""
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    if args.workdir is None:
        shutil.rmtree(root, ignore_errors=True)
    return 0 if not any(figures["returncodes"]) else 1


def main() -> int:
    import asyncio

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scifact", type=Path, default=REPO.parent / "shared" / "data" / "scifact")
    parser.add_argument("--limit", type=int, default=None, help="only the first N documents")
    parser.add_argument("--workdir", type=Path, default=None, help="keep the folders and databases here")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures to this file")
    parser.add_argument(
        "--scenario", choices=("full", "edit", "reprocess"), default="full",
        help="full: SciFact ingested, then rerun unchanged (default); edit: edits of long documents synced; "
        "reprocess: SciFact re-processed after a chunk_size change",
    )
    args = parser.parse_args()

    corpus = args.scifact / "corpus.jsonl"
    if not corpus.is_file():
        print(f"Error: no corpus.jsonl under {args.scifact}", file=sys.stderr)
        return 1
    root = args.workdir or Path(tempfile.mkdtemp(prefix="haiku-bench-ingest-"))
    if root.exists() and any(root.iterdir()):
        shutil.rmtree(root)
    root.mkdir(parents=True, exist_ok=True)
    if args.scenario == "edit":
        from ingest_edits import run_edit_scenario

        figures = run_edit_scenario(corpus, root, run_batch)
        figures["workdir"] = str(root) if args.workdir else "(temporary)"
        return report_scenario(figures, args, root)
    documents = write_corpus(corpus, root, args.limit)
    if args.scenario == "reprocess":
        from ingest_reprocess import run_reprocess_scenario

        return report_scenario(run_reprocess_scenario(root, documents, write_config(root), run_batch), args, root)
    config = write_config(root)
    load_before = os.getloadavg()[0]

    print(f"{documents} documents in {FOLDERS} folders under {root}", flush=True)
    first = run_batch(config)
    print(f"first run: {first['summary']} in {first['seconds']:.1f}s", flush=True)
    second = run_batch(config)
    print(f"second run: {second['summary']} in {second['seconds']:.1f}s", flush=True)

    texts = asyncio.run(chunk_texts(root))
    from haiku.core.config import AppConfig

    batch_size = AppConfig().embeddings.batch_size
    raw = raw_encoder(texts, batch_size, root)
    encode_seconds = raw["seconds"]
    raw_rate = len(texts) / encode_seconds
    chunks = len(texts)
    figures = {
        "documents": documents,
        "chunks": chunks,
        "first_run_s": round(first["seconds"], 2),
        "documents_per_s": round(documents / first["seconds"], 2),
        "chunks_per_s": round(chunks / first["seconds"], 2),
        "steady_chunks_per_s": (
            round(first["chunks"] * first["steady_jobs"] / max(documents, 1) / first["steady_seconds"], 2)
            if first["steady_seconds"]
            else None
        ),
        "raw_encoder_s": round(encode_seconds, 2),
        "raw_encoder_chunks_per_s": round(raw_rate, 2),
        "raw_encoder_peak_rss_mib": round(raw["peak_rss_mib"], 1),
        "ratio_to_raw_encoder": round((chunks / first["seconds"]) / raw_rate, 3),
        "first_run_cpu_s": round(first["cpu_seconds"], 1),
        "raw_encoder_cpu_s": round(raw["cpu_seconds"], 1),
        "cpu_ratio_to_raw_encoder": round(raw["cpu_seconds"] / first["cpu_seconds"], 3),
        "steady_ratio_to_raw_encoder": None,
        "peak_rss_mib": round(first["peak_rss_mib"], 1),
        "peak_pss_mib": round(first["peak_pss_mib"], 1),
        "processes": first["processes"],
        "peak_by_process_mib": first["peak_by_process_mib"],
        "second_run_s": round(second["seconds"], 2),
        "second_run_pct_of_first": round(100 * second["seconds"] / first["seconds"], 2),
        "first_summary": first["summary"],
        "second_summary": second["summary"],
        "load_average_before": round(load_before, 2),
        "load_average_after": round(os.getloadavg()[0], 2),
        "workdir": str(root),
    }
    if figures["steady_chunks_per_s"]:
        figures["steady_ratio_to_raw_encoder"] = round(figures["steady_chunks_per_s"] / raw_rate, 3)
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    if args.workdir is None:
        shutil.rmtree(root, ignore_errors=True)
    return 0 if first["returncode"] == 0 and second["returncode"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
