"""`visualize` over a set, and what it says of a chunk it cannot draw (docs/cli.md#visualize).

A database ``decks`` holds three documents written as the ingester writes them:
a slide deck (PPTX: its chunks have page boxes, and no page is stored as an
image, since only PDF pages are), a PDF stored without page images, and a PDF
with its page image. ``notes`` holds one markdown document.
"""

from __future__ import annotations

import io
import json
import zlib
from pathlib import Path

import pytest
from PIL import Image
from rag_support import build_config, config_data
from rag_support import invoke_all as cli_all

from haiku.core.errors import NoPageLayoutError
from haiku.core.models import Box, Chunk, Document, DocumentItem, DocumentStructure, PageImage
from haiku.core.scope import DatabaseRef
from haiku.rag.client import HaikuRAG
from support import write_config

PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
BOX = Box(page=1, left=72.0, top=90.0, right=300.0, bottom=110.0)


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (612, 792), "white").save(out, format="PNG")
    return out.getvalue()


def _structure(*, page_image: bool) -> DocumentStructure:
    item = DocumentItem(self_ref="#/texts/0", label="text", order=0, page_numbers=[1], boxes=[BOX], text="Tides.")
    pages = [PageImage(page=1, width=612, height=792, scale=1.0, png=_png())] if page_image else []
    return DocumentStructure(docling_document=zlib.compress(b"{}"), docling_version="t", items=[item], pages=pages)


async def _write(path: Path, name: str, documents: list[tuple[str, str, DocumentStructure | None]], data: Path) -> list[str]:
    from haiku.core.store import Store

    store = await Store.open(DatabaseRef.configured(name, path), build_config(data), create=True)
    try:
        writes = []
        for uri, content_type, structure in documents:
            boxes = [BOX] if structure is not None else []
            chunk = Chunk(content="Tides.", order=0, page_numbers=[1] if boxes else [], item_refs=["#/texts/0"], boxes=boxes)
            document = Document(uri=uri, title=uri, content="Tides.", metadata={"content_type": content_type})
            writes.append((document, [chunk], [[0.1] * 384], structure))
        stored = await store.writer().documents.upsert_documents(writes)
        return [(await store.reads.get_chunks(document.id))[0].id for document in stored]  # type: ignore[misc]
    finally:
        await store.close()


@pytest.fixture(scope="module")
async def decks(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("decks")
    deck, scan, guide = await _write(root / "decks.lancedb", "decks", [
        ("file:///talks/deck.pptx", PPTX, _structure(page_image=False)),
        ("file:///scans/scan.pdf", "application/pdf", _structure(page_image=False)),
        ("file:///guides/guide.pdf", "application/pdf", _structure(page_image=True)),
    ], root / "data")  # fmt: skip
    (note,) = await _write(root / "notes.lancedb", "notes", [("file:///notes/a.md", "text/markdown", None)], root / "data")
    locations = {"decks": root / "decks.lancedb", "notes": root / "notes.lancedb"}
    config = write_config(root / "haiku.rag.yaml", config_data(root / "data", locations))
    return {"root": root, "config": config, "deck": deck, "scan": scan, "guide": guide, "note": note}


async def test_a_slide_chunk_is_not_drawn_because_only_pdf_pages_are_stored_as_images(decks):
    async with HaikuRAG(db_path=decks["root"] / "decks.lancedb", config=build_config(decks["root"] / "data")) as client:
        with pytest.raises(NoPageLayoutError) as slide:
            await client.visualize_chunk(decks["deck"])
        with pytest.raises(NoPageLayoutError) as scan:
            await client.visualize_chunk(decks["scan"])
    said = str(slide.value)
    assert (
        "of a .pptx document, and page images are stored for PDFs only" in said,
        "page_images" in said,
        "of a PDF, but no page image is stored for them: processing.page_images was off" in str(scan.value),
    ) == (True, False, True), (said, str(scan.value))


def test_visualize_over_a_set_draws_from_the_database_holding_the_chunk(decks, tmp_path):
    drawn, unknown = cli_all(
        (("visualize", decks["guide"], "-o", str(tmp_path), "--json"), {"config": decks["config"]}),
        (("visualize", "no-such-chunk", "-o", str(tmp_path)), {"config": decks["config"]}),
    )
    report = json.loads(drawn.stdout or "{}")
    assert (drawn.returncode, report.get("source"), [p["page"] for p in report.get("pages", [])]) == (
        0, "decks", [1]
    ), drawn.stderr
    assert (unknown.returncode, unknown.stderr.strip()) == (
        1, "Error: none of the databases decks, notes holds a chunk with id no-such-chunk"
    ), unknown.stderr


async def test_the_inspectors_page_pane_says_whether_the_page_image_is_stored_and_why_not(decks):
    from haiku.core.config import load_config
    from haiku.rag.apps.inspector import Catalog
    from haiku.rag.apps.inspector.render import page_text

    async with HaikuRAG(config=load_config(decks["config"]), read_only=True) as client:
        catalog = Catalog(client)
        entry = catalog.entry("decks")
        notes = {}
        for name in ("guide", "deck", "scan"):
            chunk = await client.get_chunk_by_id(decks[name], source="decks")
            [view] = await catalog.pages(entry, chunk)
            notes[name] = page_text(view).plain.splitlines()[1]
    assert notes == {
        "guide": f"The page image is stored: `haiku-rag visualize {decks['guide']}` draws the chunk on it. "
        "Here the text on the page stands in.",
        "deck": "No page image: page images are stored for PDFs only, and this is a .pptx document. "
        "The text on the page stands in.",
        "scan": "No page image stored for this page (processing.page_images was off when the document was "
        "ingested, or it was stored before the database kept page images): the text on the page stands in.",
    }
