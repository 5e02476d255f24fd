"""A conversion worker gives OCR's memory back: a worker whose file ran OCR is
replaced after it, and a file without OCR keeps its worker (docs/ingester.md, "Memory")."""

from __future__ import annotations

import io
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "convert"))

from format_samples import text_image

from haiku.core.embedders import local_model_path
from haiku.ingester.pipeline.pool import ConversionPool

# OCR leaves 70-110 MiB behind in a worker that goes on; a fresh worker is back at rest.
AFTER_SCAN_MARGIN_MIB = 40
NOTE = b"# Notes\n\nDunlins feed on the mudflats at low tide.\n"


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for {pid}")


def _pdf_with_text_layer(text: str) -> bytes:
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    pdf = canvas.Canvas(out)
    pdf.setFont("Helvetica", 28)
    pdf.drawString(72, 720, text)
    pdf.showPage()
    pdf.save()
    return out.getvalue()


def _pool() -> ConversionPool:
    return ConversionPool(size=1, initial=1, tokenizer_dir=local_model_path(), chunk_size=64, timeout_s=240)


def _text(document) -> str:
    return " ".join(chunk.content for chunk in document.chunks)


async def test_after_a_scan_the_worker_is_replaced_and_the_next_files_convert_at_resting_size():
    pool = _pool()
    await pool.start()
    try:
        await pool.convert(name="notes.md", fmt="md", data=NOTE)
        [first] = pool.pids
        at_rest = _rss_mib(first)
        scan = await pool.convert(name="scan.pdf", fmt="pdf", data=text_image("Turnstones flip the pebbles", fmt="PDF"))
        [second] = pool.pids
        await pool.convert(name="notes.md", fmt="md", data=NOTE)
        after_scan = _rss_mib(second)
        photo = await pool.convert(name="photo.png", fmt="image", data=text_image("Wheatears flash white rumps"))
    finally:
        await pool.close()
    assert "Turnstones flip the pebbles" in _text(scan)
    assert len(scan.structure.pages) == 1  # the page image came whole before the worker went
    assert second != first and not Path(f"/proc/{first}").exists()
    assert after_scan < at_rest + AFTER_SCAN_MARGIN_MIB
    assert "Wheatears flash white rumps" in _text(photo)


async def test_files_without_ocr_keep_their_worker():
    pool = _pool()
    await pool.start()
    try:
        await pool.convert(name="notes.md", fmt="md", data=NOTE)
        [worker] = pool.pids
        printed = await pool.convert(name="printed.pdf", fmt="pdf", data=_pdf_with_text_layer("Avocets sweep"))
        await pool.convert(name="notes.md", fmt="md", data=NOTE)
        still = pool.pids
    finally:
        await pool.close()
    assert "Avocets sweep" in _text(printed)
    assert still == [worker]
