"""Documents kept whole, read back: items, pictures, chunks drawn on their pages, boxes in
results, and context grown by structure (docs/client.md#pictures-and-pages, docs/cli.md).

One folder holds the field guide as a PDF (reportlab: headings, a table, a
figure, two columns), as DOCX and as markdown; ``haiku-ingester run-batch``
ingests it as an operator would, with small chunks so that a section holds
several. Every check reads through the client or the ``haiku-rag`` CLI.
"""

from __future__ import annotations

import io
import json
import re

import pytest
from rag_support import invoke as cli
from structure_support import (
    SECTIONS,
    UNIQUE,
    field_guide_docx,
    field_guide_markdown,
    field_guide_pdf,
    ingest_folder,
    inside,
    phrase_box,
)

from haiku.core.config import load_config
from haiku.rag.client import HaikuRAG

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
MAX_CONTEXT = 1200


@pytest.fixture(scope="module")
def guides(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("guides")
    folder = root / "docs"
    folder.mkdir()
    pdf = field_guide_pdf()
    (folder / "guide.pdf").write_bytes(pdf)
    (folder / "guide.docx").write_bytes(field_guide_docx())
    (folder / "guide.md").write_text(field_guide_markdown(), encoding="utf-8")
    config = ingest_folder(root, folder, processing={"chunk_size": 120}, search={"max_context_chars": MAX_CONTEXT})
    return {"root": root, "config": config, "pdf": pdf}


async def _hit(guides, phrase: str, file: str):
    async with HaikuRAG(config=load_config(guides["config"])) as client:
        found = await client.search(f'"{phrase}"', search_type="fts", limit=1, filter=f"uri LIKE '%/{file}'")
    assert found, (phrase, file)
    return found[0]


async def _document(client: HaikuRAG, file: str):
    [document] = await client.list_documents(filter=f"uri LIKE '%/{file}'")
    return document


# --- visualize ----------------------------------------------------------------------------


async def test_a_pdf_chunk_is_drawn_on_its_page_with_its_boxes_around_its_own_text(guides):
    hit = await _hit(guides, UNIQUE["mudflats"], "guide.pdf")
    page, printed = phrase_box(guides["pdf"], UNIQUE["mudflats"])
    _, elsewhere = phrase_box(guides["pdf"], UNIQUE["reeds"])
    async with HaikuRAG(config=load_config(guides["config"])) as client:
        [drawn] = await client.visualize_chunk(hit.chunk_id)
        plain = (await client.store.structure.get_page_images(hit.document_id, [page]))[page]
    assert drawn.info["page"] == page and drawn.size == (plain.width, plain.height)
    assert inside(printed, hit.boxes, page), (printed, hit.boxes)
    assert not inside(elsewhere, hit.boxes, page)  # the box is the chunk's region, not the page

    from PIL import Image

    original = Image.open(io.BytesIO(plain.png)).convert("RGB")
    x = round((printed[0] + printed[2]) / 2 * plain.scale)
    y = round((printed[1] + printed[3]) / 2 * plain.scale)
    assert drawn.getpixel((x, y - 1)) != original.getpixel((x, y - 1)) or drawn.getpixel((x, y)) != original.getpixel((x, y))
    corner = (plain.width - 3, plain.height - 3)  # far from any text: untouched
    assert drawn.getpixel(corner) == original.getpixel(corner)


async def test_a_chunk_that_spans_pages_is_drawn_on_every_page_it_touches(guides):
    async with HaikuRAG(config=load_config(guides["config"])) as client:
        document = await _document(client, "guide.pdf")
        chunks = await client.get_chunks(document.id)
        spanning = next(c for c in chunks if len({b.page for b in c.boxes}) > 1)
        drawn = await client.visualize_chunk(spanning.id)
    assert [image.info["page"] for image in drawn] == sorted({b.page for b in spanning.boxes})


def test_cli_visualize_writes_one_png_per_page_and_prints_the_paths(guides, tmp_path):
    import asyncio

    async def spanning_chunk() -> str:
        async with HaikuRAG(config=load_config(guides["config"])) as client:
            chunks = await client.get_chunks((await _document(client, "guide.pdf")).id)
        return next(c.id for c in chunks if len({b.page for b in c.boxes}) > 1)

    chunk_id = asyncio.run(spanning_chunk())
    out = tmp_path / "shots"
    done = cli("--db-name", "guides", "visualize", chunk_id, "-o", str(out), config=guides["config"])
    assert done.returncode == 0, done.stderr
    paths = done.stdout.split()
    assert len(paths) == 2 and all(p.endswith(".png") for p in paths)
    as_json = cli("visualize", chunk_id, "-o", str(out), "--json", config=guides["config"])
    report = json.loads(as_json.stdout)
    assert [entry["path"] for entry in report["pages"]] == paths and report["source"] == "guides"
    from PIL import Image

    assert all(Image.open(path).format == "PNG" for path in paths)


# --- results carry pages and boxes ---------------------------------------------------------


def test_search_json_carries_each_results_pages_and_boxes(guides):
    done = cli("search", "-s", "fts", f'"{UNIQUE["mudflats"]}"', "--limit", "1", "--json",
               "-f", "uri LIKE '%/guide.pdf'", config=guides["config"])
    assert done.returncode == 0, done.stderr
    [result] = json.loads(done.stdout)
    assert result["page_numbers"] == [1] and result["item_refs"]
    assert {box["page"] for box in result["boxes"]} == {1}
    assert set(result["boxes"][0]) == {"page", "left", "top", "right", "bottom"}


async def test_a_citation_carries_the_boxes_of_the_cited_chunk(guides):
    from haiku.rag.capability.citations import CitationDesk, Retrieved
    from haiku.rag.capability.state import RAGState

    hit = await _hit(guides, UNIQUE["mudflats"], "guide.pdf")
    async with HaikuRAG(config=load_config(guides["config"])) as client:
        retrieved = Retrieved()
        retrieved.add([hit], hits=[hit])
        [citation], _ = await CitationDesk(client, RAGState(), retrieved, None).cite([hit.chunk_id])
    assert citation.boxes == hit.boxes and citation.boxes


async def test_the_mcp_search_tool_lists_where_each_result_lies_on_its_pages(guides):
    from mcp import Client

    from haiku.rag.mcp import create_mcp_server

    server = create_mcp_server(config=load_config(guides["config"]))
    async with Client(server) as client:
        result = await client.call_tool(
            "search_documents", {"query": UNIQUE["mudflats"], "limit": 1, "filter": "uri LIKE '%/guide.pdf'"}
        )
    text = "".join(part.text for part in result.content if hasattr(part, "text"))
    assert "Pages: 1" in text
    assert re.search(r"^Boxes: p\.1 \(\d+,\d+\)-\(\d+,\d+\)", text, re.M), text


# --- items and pictures --------------------------------------------------------------------


async def test_a_pdf_figure_is_stored_as_a_picture_whose_png_reads_back(guides, tmp_path):
    from PIL import Image

    async with HaikuRAG(config=load_config(guides["config"])) as client:
        document = await _document(client, "guide.pdf")
        items = await client.get_document_items(document.id)
        [figure] = [item for item in items if item.label == "picture" and item.has_image]
        png = await client.get_picture_bytes(document.id, figure.self_ref)
    picture = Image.open(io.BytesIO(png))
    assert picture.format == "PNG" and min(picture.size) >= 64
    out = tmp_path / "figure.png"
    done = cli("picture", document.id, figure.self_ref, "-o", str(out), config=guides["config"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(out) and out.read_bytes() == png


@pytest.mark.parametrize("file", ["guide.docx", "guide.md"])
async def test_a_documents_items_keep_its_headings_in_order_and_its_table_as_one_item(guides, file):
    async with HaikuRAG(config=load_config(guides["config"])) as client:
        items = await client.get_document_items((await _document(client, file)).id)
    headings = [item.text for item in items if item.label == "section_header"]
    assert headings == [heading for heading, _ in SECTIONS]
    [table] = [item for item in items if item.label == "table"]
    assert "Dunlin" in table.text and "1875" in table.text
    assert [item.order for item in items] == sorted(item.order for item in items)


def test_cli_get_items_lists_label_pages_ref_and_caption(guides):
    import asyncio

    async def pdf_id() -> str:
        async with HaikuRAG(config=load_config(guides["config"])) as client:
            return (await _document(client, "guide.pdf")).id

    document_id = asyncio.run(pdf_id())
    done = cli("get", document_id, "--items", config=guides["config"])
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any("picture" in line and "[picture]" in line and "#/pictures/0" in line for line in lines), lines
    assert any(UNIQUE["mudflats"][:40] in line and "p.1" in line for line in lines), lines
    listed = json.loads(cli("get", document_id, "--items", "--json", config=guides["config"]).stdout)
    assert [item["self_ref"] for item in listed][:2] == ["#/texts/0", "#/texts/1"]


# --- context expansion by structure --------------------------------------------------------


@pytest.mark.parametrize("file", ["guide.docx", "guide.md"])
async def test_a_hit_expands_to_its_section_with_its_heading_and_nothing_of_the_next(guides, file):
    hit = await _hit(guides, UNIQUE["reeds"], file)
    async with HaikuRAG(config=load_config(guides["config"])) as client:
        [expanded] = await client.expand_context([hit])
    heading, paragraphs = SECTIONS[0]
    assert expanded.content.startswith(heading)
    assert all(text in expanded.content for text in paragraphs)
    assert SECTIONS[1][0] not in expanded.content and "Mudflats feed" not in expanded.content


@pytest.mark.parametrize("file", ["guide.docx", "guide.md"])
async def test_a_long_sections_expansion_keeps_its_heading_within_the_size_limit(guides, file):
    hit = await _hit(guides, UNIQUE["mudflats"], file)
    async with HaikuRAG(config=load_config(guides["config"])) as client:
        [expanded] = await client.expand_context([hit])
    assert expanded.content.startswith(SECTIONS[1][0]) and UNIQUE["mudflats"] in expanded.content
    assert len(expanded.content) <= MAX_CONTEXT
    assert SECTIONS[0][1][0] not in expanded.content and UNIQUE["counts"] not in expanded.content


async def test_expansion_never_changes_which_results_there_are_or_their_order(guides):
    async with HaikuRAG(config=load_config(guides["config"])) as client:
        results = await client.search("birds on the mudflats at low tide", limit=6)
        expanded = await client.expand_context(results)
    shown = [r.chunk_id for r in expanded]
    assert shown == [r.chunk_id for r in results if r.chunk_id in shown]
    assert all(set(r.chunk_ids) >= {r.chunk_id} for r in expanded)


# --- PDF structure: the offline layout step --------------------------------------------------

async def test_pdf_chunks_keep_their_section_headings(guides):
    hit = await _hit(guides, UNIQUE["mudflats"], "guide.pdf")
    assert SECTIONS[1][0] in hit.headings


async def test_a_pdf_table_stays_one_item_with_its_cells(guides):
    async with HaikuRAG(config=load_config(guides["config"])) as client:
        items = await client.get_document_items((await _document(client, "guide.pdf")).id)
    [table] = [item for item in items if item.label == "table"]
    assert "Dunlin" in table.text and "1875" in table.text
    assert not any("Dunlin" in item.text for item in items if item.label != "table")


async def test_a_paragraph_broken_by_the_page_break_is_one_item_with_a_box_on_each_page(guides):
    async with HaikuRAG(config=load_config(guides["config"])) as client:
        items = await client.get_document_items((await _document(client, "guide.pdf")).id)
    [broken] = [item for item in items if item.page_numbers == [1, 2]]
    assert broken.label == "text" and broken.text in SECTIONS[1][1]
    assert {box.page for box in broken.boxes} == {1, 2}
    tail = broken.text.split(" ")[-3:]
    assert not any(item.text.startswith(tail[0]) for item in items if item.page_numbers == [2])


async def test_a_pdf_hit_expands_to_its_section(guides):
    hit = await _hit(guides, UNIQUE["reeds"], "guide.pdf")
    async with HaikuRAG(config=load_config(guides["config"])) as client:
        [expanded] = await client.expand_context([hit])
    assert expanded.content.startswith(SECTIONS[0][0]) and "Mudflats feed" not in expanded.content

