"""A real published manual kept whole: the GNU Libtasn1 manual (36 pages, GFDL; see
tests/rag/documents/README.md), ingested by ``haiku-ingester run-batch`` and read back
(docs/client.md#pictures-and-pages, "Context expansion").

Where the text is printed comes from the PDF's own text layer (pypdfium2), not
from the converter, so ``visualize`` is checked against the page itself.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from structure_support import ingest_folder, inside, phrase_box

from haiku.core.config import load_config
from haiku.rag.client import HaikuRAG

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
MANUAL = Path(__file__).resolve().parent / "documents" / "libtasn1.pdf"
NOTES = "The header file of this library is libtasn1.h."
SAME_SECTION = "ASN1_MAX_NAME_SIZE is the maximum number of characters"
NEXT_SECTION = "Add functions for a C code file"
SECTION = "Library Notes"


@pytest.fixture(scope="module")
def manual(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("manual")
    (root / "docs").mkdir()
    shutil.copy(MANUAL, root / "docs" / MANUAL.name)
    return ingest_folder(root, root / "docs", name="manuals")


async def _hit(config: Path, phrase: str):
    async with HaikuRAG(config=load_config(config)) as client:
        [hit] = await client.search(f'"{phrase}"', search_type="fts", limit=1)
    return hit


async def test_visualize_boxes_the_region_where_the_chunk_is_printed(manual):
    hit = await _hit(manual, NOTES)
    page, printed = phrase_box(MANUAL, NOTES)
    async with HaikuRAG(config=load_config(manual)) as client:
        drawn = await client.visualize_chunk(hit.chunk_id)
        stored = (await client.store.structure.get_page_images(hit.document_id, [page]))[page]
    assert [image.info["page"] for image in drawn] == sorted({box.page for box in hit.boxes})
    assert inside(printed, hit.boxes, page), (page, printed, hit.boxes)
    covered = sum((b.right - b.left) * (b.bottom - b.top) for b in hit.boxes if b.page == page)
    assert covered < (stored.width / stored.scale) * (stored.height / stored.scale) / 2  # a region, not the page


async def test_every_stored_item_lies_on_its_page(manual):
    async with HaikuRAG(config=load_config(manual)) as client:
        [document] = await client.list_documents()
        items = await client.get_document_items(document.id)
        pages = await client.store.structure.get_page_images(document.id, range(1, 37))
    assert sorted(pages) == list(range(1, 37))
    for item in items:
        for box in item.boxes:
            image = pages[box.page]
            assert 0 <= box.left <= box.right <= image.width / image.scale + 1, item
            assert 0 <= box.top <= box.bottom <= image.height / image.scale + 1, item


async def test_a_manual_chunk_keeps_its_section_heading(manual):
    hit = await _hit(manual, NOTES)
    assert any(SECTION in heading for heading in hit.headings), hit.headings


async def test_a_manual_hit_expands_to_its_section_and_stops_at_the_next(manual):
    hit = await _hit(manual, NOTES)
    async with HaikuRAG(config=load_config(manual)) as client:
        [expanded] = await client.expand_context([hit])
    assert SECTION in expanded.content.split("\n\n")[0]
    assert SAME_SECTION in expanded.content and NEXT_SECTION not in expanded.content
