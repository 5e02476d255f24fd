"""The OCR slot: two conversion workers never read a page by OCR at the same time
(docs/ingester.md, "Memory")."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "convert"))

from format_samples import text_image

from haiku.core.convert.ocr_slot import TRACE_ENV
from haiku.core.embedders import local_model_path
from haiku.ingester.pipeline.pool import ConversionPool

pytestmark = pytest.mark.slow


async def test_two_workers_reading_two_scans_take_turns_and_the_slot_file_goes_with_the_pool(
    tmp_path, monkeypatch
):
    trace = tmp_path / "slot.trace"
    monkeypatch.setenv(TRACE_ENV, str(trace))
    pool = ConversionPool(size=2, initial=2, tokenizer_dir=local_model_path(), chunk_size=64, timeout_s=240)
    slot = Path(pool.ocr_slot)
    await pool.start()
    workers = set(pool.pids)  # before the scans: a worker OCR left too large is replaced
    try:
        scans = {"grebes.png": "Grebes dive for small fish", "rails.png": "Rails hide in the reeds"}
        documents = await asyncio.gather(
            *(pool.convert(name=name, fmt="image", data=text_image(text)) for name, text in scans.items())
        )
    finally:
        await pool.close()
    for (_name, text), document in zip(scans.items(), documents, strict=True):
        assert text in " ".join(chunk.content for chunk in document.chunks)
    events = [line.split() for line in trace.read_text().splitlines()]
    assert {pid for pid, _ in events} == {str(pid) for pid in workers}  # both workers read a page
    # Each holder leaves before the next one enters: never two pages read at once.
    assert [event for _, event in events] == ["enter", "leave"] * (len(events) // 2)
    assert all(events[i][0] == events[i + 1][0] for i in range(0, len(events), 2))
    assert not slot.exists()
