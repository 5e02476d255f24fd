"""The ingester stores what a document keeps beside its text, and removes it with the document
(docs/ingester.md, "Structure, pictures and page images"; docs/storage.md)."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from ingester_support import fs_source, run_cli, write_files, write_ingester_config

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "convert"))
from test_structure import SENTENCE, pdf_with_pictures  # noqa: E402


async def _open(config: Path):
    from haiku.core.config import load_config
    from haiku.core.scope import DatabaseScope
    from haiku.core.store import Store

    app = load_config(config)
    return await Store.open(DatabaseScope.resolve(app).databases[0], app, read_only=True)


async def test_a_pdf_is_ingested_with_items_a_picture_and_a_page_image_per_page_and_deleted_with_them(tmp_path):
    from PIL import Image

    folder = tmp_path / "docs"
    write_files(folder, {"birds.pdf": pdf_with_pictures((160, 120), pages=3), "notes.md": f"# Notes\n\n{SENTENCE}\n"})
    config = write_ingester_config(
        tmp_path / "cfg.yaml",
        data_dir=tmp_path / "data",
        databases={"notes": tmp_path / "notes.lancedb"},
        ingested={"notes": [fs_source(folder, id="notes")]},
        processing={"page_image_scale": 0.5},
    )
    batch = run_cli(["run-batch"], config=config, timeout=500)
    assert batch.returncode == 0, batch.stderr[-3000:]
    store = await _open(config)
    try:
        documents = {d.uri.rsplit("/", 1)[-1]: d for d in await store.reads.list_documents()}
        pdf = documents["birds.pdf"]
        notes = documents["notes.md"].id
        assert await store.structure.has_page_layout(pdf.id) and not await store.structure.has_page_layout(notes)  # markdown: no pages
        assert await store.structure.has_structure(pdf.id) and await store.structure.has_structure(notes)
        assert [i.label for i in await store.structure.get_document_items(notes)] == ["title", "text"]
        pages = await store.structure.get_page_images(pdf.id, [1, 2, 3])
        assert [(p.page, p.width, p.height, p.scale) for p in pages.values()] == [
            (n, 306, 396, 0.5) for n in (1, 2, 3)
        ]
        [picture] = [i for i in await store.structure.get_document_items(pdf.id) if i.label == "picture"]
        assert Image.open(io.BytesIO(await store.structure.get_picture_bytes(pdf.id, picture.self_ref))).width >= 64
        chunks = await store.reads.get_chunks(pdf.id)
        assert all(c.item_refs and c.boxes for c in chunks)
        assert await store.structure.get_page_images(notes, [1]) == {}  # markdown has no pages
    finally:
        await store.close()

    (folder / "birds.pdf").unlink()
    again = run_cli(["run-batch"], config=config, timeout=500)
    assert again.returncode == 0, again.stderr[-3000:]
    store = await _open(config)
    try:
        assert await store.table("page_images").count_rows() == 0
        left = {row["document_id"] for row in await store.table("document_items").query().to_list()}
        assert left == {documents["notes.md"].id}
    finally:
        await store.close()
