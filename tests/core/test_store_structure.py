"""A document's stored structure: items, pictures and page images under the revision rule (docs/storage.md)."""

from __future__ import annotations

import io
import zlib

import pyarrow as pa
import pytest
from PIL import Image

from haiku.core.errors import PictureNotFoundError
from haiku.core.models import Box, Chunk, Document, DocumentItem, DocumentStructure, PageImage
from haiku.core.scope import DatabaseScope
from haiku.core.store import Store
from haiku.core.store.schema import document_items_schema
from haiku.core.store.structure import item_rows

TEXTS = ["Tides", "The estuary fills twice a day.", ""]


def png(width: int, height: int, colour: str) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(buffer, format="PNG")
    return buffer.getvalue()


def structure(colour: str = "red", heading: str = "Tides") -> DocumentStructure:
    box = Box(page=1, left=72.0, top=90.0, right=300.0, bottom=110.0)
    items = [
        DocumentItem(self_ref="#/texts/0", label="section_header", order=0, page_numbers=[1], boxes=[box], text=heading),
        DocumentItem(
            self_ref="#/texts/1", label="text", order=1, page_numbers=[1, 2], text="The estuary fills twice a day.",
            boxes=[box, Box(page=2, left=72.0, top=60.0, right=400.0, bottom=80.0)], parent_ref="#/texts/0",
        ),
        DocumentItem(
            self_ref="#/pictures/0", label="picture", order=2, page_numbers=[2], caption="A curlew", has_image=True,
            boxes=[Box(page=2, left=100.0, top=200.0, right=228.0, bottom=328.0)],
        ),
    ]  # fmt: skip
    return DocumentStructure(
        docling_document=zlib.compress(b'{"name": "tides"}'),
        docling_version="2.0-test",
        items=items,
        images={"#/pictures/0": png(128, 128, colour)},
        pages=[PageImage(page=p, width=612, height=792, scale=1.0, png=png(612, 792, colour)) for p in (1, 2)],
    )


async def write(store, fake_embed, uri: str = "file:///tides.pdf", structure: DocumentStructure | None = None):
    chunks = [
        Chunk(
            content="The estuary fills twice a day.", order=0, headings=["Tides"], page_numbers=[1, 2],
            item_refs=["#/texts/1"], boxes=(structure.items[1].boxes if structure else []),
        )
    ]  # fmt: skip
    document = Document(uri=uri, title="Tides", content="# Tides\n\nThe estuary fills twice a day.")
    [stored] = await store.writer().documents.upsert_documents([(document, chunks, [fake_embed(c.content) for c in chunks], structure)])
    return stored


async def rows(store, table: str) -> int:
    return await store.table(table).count_rows()


async def test_a_written_structure_reads_back_items_pictures_pages_and_chunk_boxes(store, fake_embed):
    written = structure()
    document = await write(store, fake_embed, structure=written)
    assert await store.structure.has_structure(document.id) and await store.structure.has_page_layout(document.id)
    items = await store.structure.get_document_items(document.id)
    assert [(i.self_ref, i.label, i.document_id) for i in items] == [
        ("#/texts/0", "section_header", document.id),
        ("#/texts/1", "text", document.id),
        ("#/pictures/0", "picture", document.id),
    ]
    assert items[1].boxes == written.items[1].boxes and items[1].parent_ref == "#/texts/0"
    assert items[2].has_image and items[2].caption == "A curlew" and not items[0].has_image
    assert await store.structure.get_picture_bytes(document.id, "#/pictures/0") == written.images["#/pictures/0"]
    pages = await store.structure.get_page_images(document.id, [2, 1, 9])
    assert sorted(pages) == [1, 2] and (pages[2].width, pages[2].height, pages[2].scale) == (612, 792, 1.0)
    assert Image.open(io.BytesIO(pages[1].png)).size == (612, 792)
    [chunk] = await store.reads.get_chunks(document.id)
    assert chunk.item_refs == ["#/texts/1"] and chunk.boxes == written.items[1].boxes
    [hit] = await store.search("estuary", search_type="fts", limit=1)
    assert hit.item_refs == ["#/texts/1"] and [b.page for b in hit.boxes] == [1, 2]
    docling, version = await store.structure.get_docling_document(document.id)
    assert docling == {"name": "tides"} and version == "2.0-test"


async def test_a_missing_picture_or_document_raises_a_named_error(store, fake_embed):
    document = await write(store, fake_embed, structure=structure())
    with pytest.raises(PictureNotFoundError, match="no stored picture '#/texts/0'"):
        await store.structure.get_picture_bytes(document.id, "#/texts/0")  # an item, but not a picture
    with pytest.raises(PictureNotFoundError, match="holds no document 'nope'"):
        await store.structure.get_picture_bytes("nope", "#/pictures/0")


async def test_a_document_without_structure_reports_none(store, fake_embed):
    document = await write(store, fake_embed, structure=None)
    assert not await store.structure.has_structure(document.id) and not await store.structure.has_page_layout(document.id)
    assert await store.structure.get_document_items(document.id) == []
    assert await store.structure.get_page_images(document.id, [1]) == {}
    assert await store.structure.get_docling_document(document.id) is None


async def test_a_structure_with_no_page_layout_has_structure_but_no_page_layout(store, fake_embed):
    flat = structure()
    flat.items = [item.model_copy(update={"boxes": [], "page_numbers": []}) for item in flat.items]
    flat.pages = []
    document = await write(store, fake_embed, structure=flat)
    assert await store.structure.has_structure(document.id)  # markdown, HTML, Word: items without a layout
    assert not await store.structure.has_page_layout(document.id)
    assert [i.text for i in await store.structure.get_document_items(document.id)] == TEXTS


async def test_an_update_with_the_same_structure_keeps_its_rows_and_another_replaces_them(store, fake_embed):
    document = await write(store, fake_embed, structure=structure())
    pages_version = await store.table("page_images").version()
    again = await write(store, fake_embed, structure=structure())  # re-chunked, same structure
    assert again.id == document.id
    assert await store.table("page_images").version() == pages_version  # nothing rewritten
    assert (await rows(store, "page_images"), await rows(store, "document_items")) == (2, 3)

    await write(store, fake_embed, structure=structure(colour="blue", heading="Currents"))
    assert (await rows(store, "page_images"), await rows(store, "document_items")) == (2, 3)
    assert (await store.structure.get_document_items(document.id))[0].text == "Currents"
    blue = await store.structure.get_page_images(document.id, [1])
    assert Image.open(io.BytesIO(blue[1].png)).getpixel((0, 0)) == (0, 0, 255)

    await write(store, fake_embed, structure=None)  # converted now without structure
    assert (await rows(store, "page_images"), await rows(store, "document_items")) == (0, 0)
    assert not await store.structure.has_structure(document.id)


async def test_deleting_a_document_removes_its_items_and_page_images(store, fake_embed):
    kept = await write(store, fake_embed, uri="file:///kept.pdf", structure=structure())
    gone = await write(store, fake_embed, uri="file:///gone.pdf", structure=structure(colour="green"))
    assert await store.writer().documents.delete_document(gone.id) == 1
    assert (await rows(store, "page_images"), await rows(store, "document_items")) == (2, 3)
    assert await store.structure.has_structure(kept.id) and not await store.structure.has_structure(gone.id)


async def test_rows_of_an_update_cut_short_are_never_read_and_the_next_write_removes_them(
    db_config, fake_embed
):
    config = db_config("wiki")
    ref = DatabaseScope.resolve(config).databases[0]
    store = await Store.open(ref, config, create=True)
    try:
        document = await write(store, fake_embed, structure=structure())
        # What a crash after commit 1 of an update leaves: items of a revision no row names.
        stray = item_rows(document.id, structure(heading="Half written"), "crashed-revision")
        await store.table("document_items").add(pa.Table.from_pylist(stray, schema=document_items_schema()))
        assert [i.text for i in await store.structure.get_document_items(document.id)] == TEXTS
    finally:
        await store.close()
    store = await Store.open(ref, config)  # a new store: its first write removes what no row points at
    try:
        await write(store, fake_embed, uri="file:///other.md", structure=None)
        assert await rows(store, "document_items") == 3
        assert [i.text for i in await store.structure.get_document_items(document.id)] == TEXTS
    finally:
        await store.close()


async def test_vacuum_reclaims_the_page_images_of_deleted_documents(db_config, fake_embed):
    config = db_config("wiki")
    ref = DatabaseScope.resolve(config).databases[0]
    store = await Store.open(ref, config, create=True)
    try:
        document = await write(store, fake_embed, structure=structure())
        pages_dir = ref.location / "page_images.lance"
        before = sum(f.stat().st_size for f in pages_dir.rglob("*") if f.is_file())
        await store.writer().documents.delete_document(document.id)
        await store.vacuum(retention_seconds=0)
        after = sum(f.stat().st_size for f in pages_dir.rglob("*") if f.is_file())
        assert after < before - 2 * len(structure().pages[0].png) // 2
    finally:
        await store.close()
