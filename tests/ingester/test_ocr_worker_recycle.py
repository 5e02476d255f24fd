"""A conversion worker gives OCR's memory back: after a file that ran OCR it is
back near its resting size, or replaced when it is not; a file without OCR keeps
its worker (docs/ingester.md, "Memory")."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "convert"))

from format_samples import pdf_with_text_layer, text_image

from haiku.core.embedders import local_model_path
from haiku.ingester.pipeline.pool import ConversionPool
from haiku.ingester.pipeline.worker import RETIRE_OVER_MIB

pytestmark = pytest.mark.slow

NOTE = b"# Notes\n\nDunlins feed on the mudflats at low tide.\n"
SLACK_MIB = 8  # the resting size is read after a first file here, at start-up in the worker


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for {pid}")


def _scanned_a4(pages: int) -> bytes:
    """A4 pages of 36 lines at 150 dpi, saved as images in a PDF: no text layer."""
    from PIL import Image, ImageDraw, ImageFont

    images = []
    for page in range(pages):
        image = Image.new("L", (1240, 1754), 250)
        draw = ImageDraw.Draw(image)
        for line in range(36):
            text = f"{page + 1}.{line + 1} Turnstones flip the pebbles on the shore"
            draw.text((100, 120 + line * 42), text, fill=20, font=ImageFont.load_default(size=30))
        images.append(image)
    out = io.BytesIO()
    images[0].save(out, format="PDF", save_all=True, append_images=images[1:], resolution=150.0)
    return out.getvalue()


def _pool(**options) -> ConversionPool:
    return ConversionPool(size=1, initial=1, tokenizer_dir=local_model_path(), chunk_size=64, timeout_s=240, **options)


def _text(document) -> str:
    return " ".join(chunk.content for chunk in document.chunks)


async def test_after_a_scan_the_next_file_finds_a_worker_near_its_resting_size():
    pool = _pool()
    await pool.start()
    try:
        await pool.convert(name="notes.md", fmt="md", data=NOTE)
        [first] = pool.pids
        at_rest = _rss_mib(first)
        scan = await pool.convert(name="scan.pdf", fmt="pdf", data=_scanned_a4(2))
        await pool.convert(name="notes.md", fmt="md", data=NOTE)
        [next_worker] = pool.pids
        after_scan = _rss_mib(next_worker)
    finally:
        await pool.close()
    assert "Turnstones flip the pebbles" in _text(scan)
    assert after_scan < at_rest + RETIRE_OVER_MIB + SLACK_MIB


async def test_a_worker_over_its_bound_after_a_scan_is_replaced_and_the_next_scan_converts():
    pool = _pool(retire_over_mib=0)  # any memory OCR leaves is too much: the worker goes
    await pool.start()
    try:
        await pool.convert(name="notes.md", fmt="md", data=NOTE)
        [first] = pool.pids
        scan = await pool.convert(name="scan.pdf", fmt="pdf", data=text_image("Turnstones flip the pebbles", fmt="PDF"))
        [second] = pool.pids
        photo = await pool.convert(name="photo.png", fmt="image", data=text_image("Wheatears flash white rumps"))
    finally:
        await pool.close()
    assert "Turnstones flip the pebbles" in _text(scan)
    assert len(scan.structure.pages) == 1  # the page image came whole before the worker went
    assert second != first and not Path(f"/proc/{first}").exists()
    assert "Wheatears flash white rumps" in _text(photo)


async def test_files_without_ocr_keep_their_worker_whatever_its_bound():
    pool = _pool(retire_over_mib=0)
    await pool.start()
    try:
        await pool.convert(name="notes.md", fmt="md", data=NOTE)
        [worker] = pool.pids
        printed = await pool.convert(name="printed.pdf", fmt="pdf", data=pdf_with_text_layer("Avocets sweep"))
        await pool.convert(name="notes.md", fmt="md", data=NOTE)
        still = pool.pids
    finally:
        await pool.close()
    assert "Avocets sweep" in _text(printed)
    assert still == [worker]
