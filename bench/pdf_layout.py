"""The PDF layout step on real PDFs (docs/ingester.md, "PDF layout").

For each PDF with a reference under bench/pdf_headings/ (the section headings of
its printed table of contents, written by hand; the first line names the file),
with ``processing.pdf_layout`` ``off`` and ``auto``:

* headings: the reference headings found as section headers (recall), and how
  many section headers the document has in all, its tables and pictures, and the
  page headers and footers kept out of the text;
* heading levels: of the reference headings found, the share at the level the
  reference gives (``LEVEL | heading`` lines), counted from the document's own
  top level: ``level_offset`` is how many levels stand above the reference's
  chapters (a title page heading: 1), the most common difference;
* speed, in a real conversion worker (the process the ingester runs, at nice 10):
  pages/s (wall clock) and pages per CPU-second of the worker;
* memory: the worker's peak RSS (VmHWM) after all the PDFs and one scanned page
  (OCR), and, beside it, a fresh process that loads the embedder and embeds: the
  two together are what one ingester holds at most with one worker.

    python bench/pdf_layout.py [--json bench/results/pdf_layout.json] [--headings-only] [--skip-candidates]
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REFERENCES = REPO / "bench" / "pdf_headings"
sys.path.insert(0, str(REPO / "bench"))

EMBEDDER_PEAK = """
from haiku.core.config import AppConfig
from haiku.core.embedders import get_embedder
from process_memory import peak_rss_mib
import asyncio
embedder = get_embedder(AppConfig())
asyncio.run(embedder.embed_documents(["a sentence about section headings in a manual"] * 64))
print(peak_rss_mib())
"""


def references() -> list[tuple[str, Path, list[tuple[int, str]]]]:
    """(name, PDF, reference (level, heading) pairs) of each reference whose PDF is on this machine."""
    found = []
    for path in sorted(REFERENCES.glob("*.txt")):
        lines = path.read_text(encoding="utf-8").splitlines()
        source = Path(lines[0].lstrip("# ").split()[0])
        headings = []
        for line in lines:
            if line.strip() and not line.startswith("#"):
                level, _, heading = line.partition(" | ")
                headings.append((int(level), heading.strip()))
        if source.is_file():
            found.append((f"{path.stem}.pdf", source, headings))
    return found


def level_accuracy(reference: list[tuple[int, str]], levels: dict[str, int]) -> dict:
    """Of the reference headings found, the share at the reference's level, counted from the
    document's own top (the most common difference between the two levels). ``levels``: by the
    heading's text as printed, numbering and all (two sections may share a title)."""
    from collections import Counter

    from haiku.core.convert.layout_lines import normalized

    pairs = [(level, levels[normalized(h)]) for level, h in reference if normalized(h) in levels]
    if not pairs:
        return {"level_accuracy": 0.0, "level_offset": None, "levels_used": []}
    offset = Counter(found - wanted for wanted, found in pairs).most_common(1)[0][0]
    right = sum(1 for wanted, found in pairs if found - wanted == offset)
    return {
        "level_accuracy": round(right / len(pairs), 3),
        "level_offset": offset,
        "levels_used": sorted(set(levels.values())),
    }


def pdf_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix == ".gz" else data


def structure(document, levelled: list[tuple[int, str]]) -> dict:
    from docling_core.types.doc import DocItemLabel

    from haiku.core.convert.layout_headings import title_key
    from haiku.core.convert.layout_lines import normalized

    reference = [h for _, h in levelled]
    labels: dict[str, int] = {}
    headers: set[str] = set()
    levels: dict[str, int] = {}
    for item, _level in document.iterate_items(included_content_layers={"body", "furniture"}):
        labels[item.label.value] = labels.get(item.label.value, 0) + 1
        if item.label == DocItemLabel.SECTION_HEADER:
            headers.add(title_key(item.text))
            levels.setdefault(normalized(item.text), item.level)
    found = [h for h in reference if title_key(h) in headers]
    return {
        "reference_headings": len(reference),
        "recognised": len(found),
        "recall": round(len(found) / max(len(reference), 1), 3),
        "missed": [h for h in reference if title_key(h) not in headers],
        **level_accuracy(levelled, levels),
        "section_headers": labels.get("section_header", 0),
        "tables": labels.get("table", 0),
        "pictures": labels.get("picture", 0),
        "page_headers_and_footers": labels.get("page_header", 0) + labels.get("page_footer", 0),
        "text_items": labels.get("text", 0),
    }


CANDIDATES = {
    "font size": {"size"},
    "outline": {"outline"},
    "layout-model titles": {"title"},
    "weight (bold heads)": {"bold"},
    "font size + outline": {"size", "outline"},
    "all four (kept)": {"size", "outline", "title", "bold"},
}


def candidates(name: str, data: bytes, reference: list[tuple[int, str]]) -> dict:
    """Recall and the number of section headers found by each heading signal alone and together."""
    from haiku.core.convert.backends import DoclingBackends
    from haiku.core.convert.layout import lay_out

    native = DoclingBackends().convert(name, "pdf", data)
    found = {}
    for label, signals in CANDIDATES.items():
        figures = structure(lay_out(data, native, signals=frozenset(signals)), reference)
        found[label] = {"recall": figures["recall"], "section_headers": figures["section_headers"]}
    return found


async def speed(mode: str, pdfs: list[tuple[str, bytes, int]]) -> dict:
    from haiku.core.embedders import local_model_path
    from haiku.ingester.pipeline.pool import ConversionPool
    from ocr import WorkerWatch, scanned_pdf, worker_cpu_s, worker_peak_mib

    pool = ConversionPool(size=1, tokenizer_dir=local_model_path(), chunk_size=256, timeout_s=3600, pdf_layout=mode)
    await pool.start()
    per_file = {}
    try:
        await pool.convert(name="warm.md", fmt="md", data=b"# Warm\n\nup\n")
        pid = pool.pids[0]
        before = worker_peak_mib(pid)
        for name, data, pages in pdfs:
            cpu, started = worker_cpu_s(pid), time.perf_counter()
            await pool.convert(name=name, fmt="pdf", data=data)
            wall, cpu = time.perf_counter() - started, worker_cpu_s(pid) - cpu
            per_file[name] = {"pages": pages, "pages_per_s": round(pages / wall, 2), "pages_per_cpu_s": round(pages / cpu, 2)}
        after_pdfs = worker_peak_mib(pid)
        watch = WorkerWatch(pid)  # a worker OCR left over its bound exits after the file
        watch.start()
        await pool.convert(name="scan.pdf", fmt="pdf", data=scanned_pdf(1))
        watch.stop()
        with_ocr = watch.peak_mib
    finally:
        await pool.close()
    pages = sum(p for _, _, p in pdfs)
    return {
        "files": per_file,
        "pages": pages,
        "worker_peak_rss_mib_before": before,
        "worker_peak_rss_mib_after_pdfs": after_pdfs,
        "worker_peak_rss_mib_with_ocr": with_ocr,
    }


def embedder_peak_mib() -> float:
    done = subprocess.run(
        [sys.executable, "-c", EMBEDDER_PEAK], capture_output=True, text=True, cwd=REPO / "bench", check=True
    )
    return float(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--headings-only", action="store_true", help="the structure figures only, in this process")
    parser.add_argument("--skip-candidates", action="store_true", help="leave out each heading signal measured alone")
    args = parser.parse_args(argv)
    import pypdfium2

    from haiku.core.convert.converter import Converter
    from haiku.core.embedders import local_model_path

    cases = references()
    pdfs = []
    for name, path, _ in cases:
        data = pdf_bytes(path)
        pdfs.append((name, data, len(pypdfium2.PdfDocument(data))))
    report: dict = {"loadavg_before": Path("/proc/loadavg").read_text().split()[0], "modes": {}}
    for mode in ("off", "auto"):
        converter = Converter(tokenizer_dir=local_model_path(), chunk_size=256, pdf_layout=mode)
        headings = {
            name: structure(converter.read(name=name, fmt="pdf", data=data).docling, reference)
            for (name, data, _), (_, _, reference) in zip(pdfs, cases, strict=True)
        }
        report["modes"][mode] = {"structure": headings}
        if not args.headings_only:
            report["modes"][mode]["worker"] = asyncio.run(speed(mode, pdfs))
    if not args.skip_candidates:
        report["heading_candidates"] = {
            name: candidates(name, data, reference)
            for (name, data, _), (_, _, reference) in zip(pdfs, cases, strict=True)
        }
    if args.headings_only:
        print(json.dumps(report, indent=2))
        return 0
    report["embedder_process_peak_rss_mib"] = embedder_peak_mib()
    worker = report["modes"]["auto"]["worker"]["worker_peak_rss_mib_with_ocr"]
    report["worker_with_layout_and_ocr_plus_embedder_mib"] = round(worker + report["embedder_process_peak_rss_mib"], 1)
    report["loadavg_after"] = Path("/proc/loadavg").read_text().split()[0]
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
