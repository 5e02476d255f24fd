"""OCR throughput and the conversion worker's memory with OCR (docs/ingester.md, "Scanned pages (OCR)").

Makes a scanned PDF of N A4 pages (text rendered to a 150 dpi image per page, no
text layer), converts it in a real conversion worker (the process the ingester
runs), and reports pages/s and the worker's peak RSS (VmHWM) before and after
the OCR, and the RSS of the worker the next file finds (a fresh one where OCR
left the worker over its bound: docs/ingester.md, "Memory").

    python bench/ocr.py --pages 10 [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import sys
import threading
import time
from pathlib import Path

LINES = [
    "Retrieval systems index text so that a query finds the passages that answer it.",
    "A scanned page has no text layer: only OCR can read what it says.",
    "The detection model finds the lines, the recognition model reads each of them.",
]


def scanned_pdf(pages: int) -> bytes:
    from PIL import Image, ImageDraw, ImageFont

    images = []
    for page in range(pages):
        image = Image.new("L", (1240, 1754), 250)
        draw = ImageDraw.Draw(image)
        font = ImageFont.load_default(size=30)
        for i in range(36):
            draw.text((100, 120 + i * 42), f"{page + 1}.{i + 1} {LINES[i % len(LINES)]}", fill=20, font=font)
        images.append(image)
    out = io.BytesIO()
    images[0].save(out, format="PDF", save_all=True, append_images=images[1:], resolution=150.0)
    return out.getvalue()


class WorkerWatch(threading.Thread):
    """A conversion worker's VmHWM and CPU time, sampled every 0.05 s until it exits: a worker
    that OCR left over its bound exits after the file (docs/ingester.md, "Memory")."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak_mib = worker_peak_mib(pid)
        self.cpu_s = worker_cpu_s(pid)
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.wait(0.05):
            try:  # max: an exited worker (a zombie) reads as no memory
                self.peak_mib = max(self.peak_mib, worker_peak_mib(self.pid))
                self.cpu_s = max(self.cpu_s, worker_cpu_s(self.pid))
            except OSError:
                return  # reaped: the last values read stand

    def stop(self) -> None:
        self._halt.set()
        self.join()


def worker_cpu_s(pid: int) -> float:
    """The worker's CPU time (user + system): pages per CPU-second hold on a loaded machine."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def worker_peak_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


async def measure(pages: int) -> dict[str, float | int]:
    from haiku.core.embedders import local_model_path
    from haiku.ingester.pipeline.pool import ConversionPool

    data = scanned_pdf(pages)
    pool = ConversionPool(size=1, tokenizer_dir=local_model_path(), chunk_size=256, timeout_s=3600)
    await pool.start()
    try:
        await pool.convert(name="warm.md", fmt="md", data=b"# Warm\n\nup\n")
        watch = WorkerWatch(pool.pids[0])
        before, cpu = watch.peak_mib, watch.cpu_s
        watch.start()
        started = time.perf_counter()
        document = await pool.convert(name="scanned.pdf", fmt="pdf", data=data)
        seconds = time.perf_counter() - started
        watch.stop()
        after, cpu = watch.peak_mib, watch.cpu_s - cpu
        await pool.convert(name="next.md", fmt="md", data=b"# Next\n\nfile\n")
        resident_next = _rss_mib(pool.pids[0])  # it may be a fresh worker
    finally:
        await pool.close()
    text = " ".join(c.content for c in document.chunks)
    return {
        "pages": pages,
        "seconds": round(seconds, 2),
        "pages_per_s": round(pages / seconds, 3),
        "worker_cpu_s": round(cpu, 1),
        "pages_per_cpu_s": round(pages / cpu, 3),
        "worker_rss_mib_for_the_next_file": resident_next,
        "worker_peak_rss_mib_before_ocr": before,
        "worker_peak_rss_mib_with_ocr": after,
        "chunks": len(document.chunks),
        "lines_read": sum(text.count(line) for line in LINES),
        # full-text search folds case: a line read with a letter's case wrong is still found
        "lines_read_ignoring_case": sum(text.lower().count(line.lower()) for line in LINES),
        "lines_on_pages": pages * 36,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=10)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    report = asyncio.run(measure(args.pages))
    report["loadavg"] = Path("/proc/loadavg").read_text().split()[0]
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
