"""Peak memory of compacting a database full of page images (docs/storage.md, "Size per page").

Builds a database the way an ingester fills one with PDFs: ``--documents``
documents of ``--pages`` pages each, every page a real page image (the pages of
a real PDF rendered at the default ``processing.page_image_scale``), each
document written by its own upsert and then updated once (so the
``page_images`` table holds many small fragments and deleted rows); then runs
``haiku-rag vacuum`` in a fresh process and reports that process's peak RSS.
The same database without page images is the baseline: the difference is what
compacting the images costs.

    python bench/pdf_compaction.py [--documents 10] [--pages 36] [--json bench/results/pdf_compaction.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

PDF = Path("/usr/share/doc/libtasn1-doc/libtasn1.pdf")
HAIKU_RAG = Path(sys.executable).parent / "haiku-rag"


def page_pngs(pages: int, scale: float) -> list[tuple[int, int, bytes]]:
    """(width, height, PNG) of the first ``pages`` pages of the PDF, rendered as the ingester renders them."""
    from itertools import islice

    from haiku.core.convert.pages import render_pdf_pages

    return [(p.width, p.height, p.png) for p in islice(render_pdf_pages(PDF.read_bytes(), scale), pages)]


async def build(location: Path, documents: int, pngs: list[tuple[int, int, bytes]], scale: float) -> dict:
    from haiku.core.config import AppConfig
    from haiku.core.models import Chunk, Document, DocumentStructure, PageImage
    from haiku.core.scope import DatabaseScope
    from haiku.core.store import Store

    config = AppConfig.model_validate(
        {"lancedb": {"databases": {"bench": str(location)}}, "storage": {"auto_vacuum": False}}
    )
    ref = DatabaseScope.resolve(config).databases[0]
    dim = config.embeddings.model.vector_dim
    store = await Store.open(ref, config, create=True)
    try:
        for round_ in range(2):  # written, then updated: deleted rows for compaction to drop
            for n in range(documents):
                chunks = [Chunk(order=i, content=f"page {i} of manual {n}, round {round_}") for i in range(len(pngs))]
                vectors = [[((i * 7 + j + n) % 13) / 13.0 for j in range(dim)] for i in range(len(chunks))]
                pages = [PageImage(page=i + 1, width=w, height=h, scale=scale, png=png) for i, (w, h, png) in enumerate(pngs)]
                structure = (
                    DocumentStructure(docling_document=zlib.compress(f'{{"r": {round_}}}'.encode()), docling_version="bench", pages=pages)
                    if pngs else None
                )
                document = Document(uri=f"file:///manual-{n}.pdf", title=f"Manual {n}", content=f"manual {n} round {round_}")
                await store.writer().documents.upsert_documents([(document, chunks, vectors, structure)])
        return {"page_images_rows": await store.table("page_images").count_rows()}
    finally:
        await store.close()


def vacuum_peak_mib(root: Path, location: Path) -> tuple[float, float]:
    """Peak RSS (MiB) and wall seconds of ``haiku-rag vacuum`` over the database, in a fresh process."""
    config = root / "haiku.rag.yaml"
    config.write_text(json.dumps({"lancedb": {"databases": {"bench": str(location)}}}))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    started = time.perf_counter()
    process = subprocess.Popen(
        [str(HAIKU_RAG), "--config", str(config), "--db-name", "bench", "vacuum"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    stderr = process.stderr.read().decode() if process.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"haiku-rag vacuum failed: {stderr[-2000:]}")
    return round(usage.ru_maxrss / 1024, 1), round(seconds, 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=10)
    parser.add_argument("--pages", type=int, default=36)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    from haiku.core.config import AppConfig

    scale = AppConfig().processing.page_image_scale
    pngs = page_pngs(args.pages, scale)
    report: dict = {"loadavg": Path("/proc/loadavg").read_text().split()[:3], "documents": args.documents,
                    "pages_per_document": len(pngs), "page_image_scale": scale,
                    "page_png_bytes_mean": round(sum(len(p) for *_, p in pngs) / max(len(pngs), 1))}
    with tempfile.TemporaryDirectory() as tmp:
        for label, images in (("without_page_images", []), ("with_page_images", pngs)):
            root = Path(tmp) / label
            root.mkdir()
            location = root / "bench.lancedb"
            built = asyncio.run(build(location, args.documents, images, scale))
            peak, seconds = vacuum_peak_mib(root, location)
            report[label] = {**built, "vacuum_peak_rss_mib": peak, "vacuum_seconds": seconds,
                             "page_images_bytes": sum(f.stat().st_size for f in (location / "page_images.lance").rglob("*") if f.is_file())}
    report["page_images_cost_mib"] = round(
        report["with_page_images"]["vacuum_peak_rss_mib"] - report["without_page_images"]["vacuum_peak_rss_mib"], 1
    )
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
