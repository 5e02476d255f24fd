"""What a PDF's structure costs: page image bytes, database growth per page, worker memory and frames
(docs/storage.md, "Size per page").

Each PDF is converted in a real conversion worker (the process the ingester
runs) at the default ``processing`` settings, then written to a fresh
database twice: once with its structure (items, pictures, page images) and
once without, so the growth the structure adds per page is the difference.
Vectors are deterministic stand-ins of the configured dimension (the encoder
is not what is measured; a vector takes the same bytes whatever its values).

    python bench/pdf_storage.py [PDF ...] [--json bench/results/pdf_storage.json]

With no PDF given it uses the GFDL manuals of Debian -doc packages found on
this machine (libtasn1, auto-multiple-choice).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import pickle
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

DEFAULT_PDFS = [
    Path("/usr/share/doc/libtasn1-doc/libtasn1.pdf"),
    Path("/tmp/fmt-real/x/usr/share/doc/auto-multiple-choice/auto-multiple-choice.en.pdf"),
]

TABLES = ("documents", "chunks", "document_items", "page_images")


def _status_mib(pid: int, key: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def _tree_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


async def _stored_bytes(root: Path, converted, with_structure: bool) -> dict[str, int]:
    """Bytes per table after writing the converted document (compacted, old versions removed)."""
    from haiku.core.config import AppConfig
    from haiku.core.models import Chunk, Document
    from haiku.core.scope import DatabaseScope
    from haiku.core.store import Store

    location = root / ("with.lancedb" if with_structure else "without.lancedb")
    config = AppConfig.model_validate({"lancedb": {"databases": {"bench": str(location)}}})
    ref = DatabaseScope.resolve(config).databases[0]
    dim = config.embeddings.model.vector_dim
    chunks = [
        Chunk(order=i, content=c.content, headings=c.headings, page_numbers=c.page_numbers,
              item_refs=c.item_refs, boxes=c.boxes)
        for i, c in enumerate(converted.chunks)
    ]  # fmt: skip
    vectors = [[((i * 7 + j) % 13) / 13.0 for j in range(dim)] for i in range(len(chunks))]
    document = Document(uri="file:///bench.pdf", title=converted.title, content=converted.content)
    store = await Store.open(ref, config, create=True)
    try:
        empty = {name: _tree_bytes(location / f"{name}.lance") for name in TABLES}
        await store.writer().documents.upsert_documents([(document, chunks, vectors, converted.structure if with_structure else None)])
        await store.vacuum(retention_seconds=0)
        return {
            name: _tree_bytes(location / f"{name}.lance") - empty[name] for name in TABLES
        }
    finally:
        await store.close()


async def measure(path: Path) -> dict[str, object]:
    from haiku.core.config import AppConfig
    from haiku.core.convert.files import tokenizer_dir
    from haiku.core.convert.structure import StructureOptions
    from haiku.ingester.pipeline.pool import ConversionPool

    config = AppConfig()
    pool = ConversionPool(
        size=1, tokenizer_dir=tokenizer_dir(config), chunk_size=config.processing.chunk_size, timeout_s=3600,
        structure=asdict(StructureOptions.from_processing(config.processing)),
    )  # fmt: skip
    await pool.start()
    try:
        await pool.convert(name="warm.md", fmt="md", data=b"# Warm\n\nup\n")
        pid = pool.pids[0]
        before = _status_mib(pid, "VmHWM")
        started = time.perf_counter()
        converted = await pool.convert(name=path.name, fmt="pdf", data=path.read_bytes())
        seconds = time.perf_counter() - started
        peak = _status_mib(pid, "VmHWM")
    finally:
        await pool.close()
    structure = converted.structure
    pages = structure.pages
    page_bytes = [len(p.png) for p in pages]
    pages_kept, structure.pages = structure.pages, []
    reply_frame = len(pickle.dumps({"ok": True, "document": converted, "pages": True}, protocol=pickle.HIGHEST_PROTOCOL))
    structure.pages = pages_kept
    largest_page_frame = max((len(pickle.dumps(p, protocol=pickle.HIGHEST_PROTOCOL)) for p in pages), default=0)
    with tempfile.TemporaryDirectory() as tmp:
        with_structure = await _stored_bytes(Path(tmp), converted, True)
        without = await _stored_bytes(Path(tmp), converted, False)
    count = max(1, len(pages))
    growth = sum(with_structure.values())
    return {
        "pdf": str(path),
        "pages": len(pages),
        "items": len(structure.items),
        "pictures_stored": len(structure.images),
        "chunks": len(converted.chunks),
        "convert_seconds": round(seconds, 2),
        "pages_per_s": round(len(pages) / seconds, 2) if seconds else None,
        "page_png_bytes_mean": round(sum(page_bytes) / count),
        "page_png_bytes_max": max(page_bytes, default=0),
        "docling_json_bytes": len(structure.docling_document),
        "db_bytes_by_table": with_structure,
        "db_growth_bytes_per_page": round(growth / count),
        "db_growth_bytes_per_page_without_structure": round(sum(without.values()) / count),
        "worker_peak_rss_mib_before": before,
        "worker_peak_rss_mib_after": peak,
        "reply_frame_bytes": reply_frame,
        "largest_page_frame_bytes": largest_page_frame,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pdfs", nargs="*", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    pdfs = args.pdfs or [p for p in DEFAULT_PDFS if p.is_file()]
    results = [await measure(path) for path in pdfs]
    report = {"loadavg": Path("/proc/loadavg").read_text().split()[:3], "cpus": os.cpu_count(), "results": results}
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    asyncio.run(main())
