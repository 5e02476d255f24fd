"""The pictures of what ``ask`` retrieved reach the model (docs/pictures.md).

A real database ``atlas`` keeps one document with two pictures, stored as the
store keeps a converted document's structure: items (the pictures and their
captions) with PNG bytes, chunks cut from them. The model is the scripted
OpenAI-compatible server; the request it receives is what these tests read.
"""

from __future__ import annotations

import base64
import zlib
from pathlib import Path
from typing import Any

import pytest
from qa_scripted_model import answer, call

from haiku.rag.qa import ask
from support import solid_png

MAP_CAPTION = "Figure 1: the heron colony on the north shore"
# A picture with no caption of its own: a model reads nothing about it without the image.
SKETCH_ITEM_TEXT = ""


MAP_PNG = solid_png((200, 30, 30), (80, 60))
SKETCH_PNG = solid_png((30, 30, 200), (80, 60))


@pytest.fixture(scope="session")
async def atlas(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> dict[str, Any]:
    """A database whose one document holds two pictures: a captioned map and an uncaptioned sketch."""
    from haiku.core.config import config_from_dict
    from haiku.core.models import Chunk, Document, DocumentItem, DocumentStructure
    from haiku.core.scope import DatabaseRef
    from haiku.core.store import Store

    root = tmp_path_factory.mktemp("atlas")
    config = config_from_dict({"storage": {"data_dir": str(root / "data")}})
    location = root / "atlas.lancedb"
    items = [
        DocumentItem(self_ref="#/texts/0", label="section_header", order=0, text="Herons"),
        DocumentItem(self_ref="#/texts/1", label="text", order=1, text="Grey herons nest in colonies called heronries."),
        DocumentItem(self_ref="#/pictures/0", label="picture", order=2, caption=MAP_CAPTION, has_image=True),
        DocumentItem(self_ref="#/texts/2", label="caption", order=3, text=MAP_CAPTION, parent_ref="#/pictures/0"),
        DocumentItem(self_ref="#/pictures/1", label="picture", order=4, text=SKETCH_ITEM_TEXT, has_image=True),
    ]
    parts = [
        ("Grey herons nest in colonies called heronries.", ["#/texts/1"]),
        (f"Heron colony map. {MAP_CAPTION}", ["#/pictures/0", "#/texts/2"]),
        ("A heron sketch: long neck, grey wings, standing in reeds.", ["#/pictures/1"]),
    ]
    structure = DocumentStructure(
        docling_document=zlib.compress(b"{}"),
        docling_version="test",
        items=items,
        images={"#/pictures/0": MAP_PNG, "#/pictures/1": SKETCH_PNG},
    )
    store = await Store.open(DatabaseRef.configured("atlas", location), config, create=True)
    try:
        vectors = await embedder.embed_documents([text for text, _ in parts])
        chunks = [Chunk(order=i, content=text, headings=["Herons"], item_refs=refs) for i, (text, refs) in enumerate(parts)]
        document = Document(uri="file:///atlas/herons.pdf", title="Herons", content="\n\n".join(t for t, _ in parts))
        [stored] = await store.writer().documents.upsert_documents([(document, chunks, vectors, structure)])
        chunk_ids = [c.id for c in await store.reads.get_chunks(stored.id)]
    finally:
        await store.close()
    return {"location": location, "document_id": stored.id, "chunk_ids": chunk_ids}


@pytest.fixture
def open_atlas(atlas, qa_databases, scripted_model, tmp_path: Path):
    """``open_atlas("atlas", "wiki", images=True, max_images=8)``: a client over those databases."""
    from haiku.core.config import config_from_dict
    from haiku.rag.client import HaikuRAG

    locations = {**qa_databases.locations, "atlas": atlas["location"]}

    def make(*names: str, images: bool, max_images: int | None = None) -> HaikuRAG:
        qa: dict[str, Any] = {
            "model": {"name": "scripted", "base_url": scripted_model.base_url, "images": images},
            "request_limit": 8,
        }
        if max_images is not None:
            qa["max_images"] = max_images
        data = {
            "storage": {"data_dir": str(tmp_path / "data")},
            "lancedb": {"databases": {n: str(locations[n]) for n in names}},
            "qa": qa,
        }
        return HaikuRAG(config=config_from_dict(data), read_only=True)

    return make


HERON_QUERY = "heron colony map sketch"


def _shown(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The content parts of the user message that follows the last round of tool results."""
    last = request["messages"][-1]
    assert last["role"] == "user" and isinstance(last["content"], list), last
    return last["content"]


def _images(parts: list[dict[str, Any]]) -> list[bytes]:
    prefix = "data:image/png;base64,"
    urls = [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]
    assert all(u.startswith(prefix) for u in urls)
    return [base64.b64decode(u[len(prefix):]) for u in urls]


async def test_a_model_reading_images_is_sent_each_retrieved_picture_labelled_with_its_collection(open_atlas, model):
    model.play(call("search", query=HERON_QUERY, limit=5), answer("A map and a sketch of herons."))
    async with open_atlas("atlas", "wiki", images=True) as client:
        await ask(client, "What do the heron pictures show?")
    parts = _shown(model.requests[1])
    assert sorted(_images(parts)) == sorted([MAP_PNG, SKETCH_PNG])
    labels = [p["text"] for p in parts if p["type"] == "text"]
    assert len(labels) == 2 and all("(Collection: atlas)" in label for label in labels)
    assert any(label.endswith(MAP_CAPTION) and "#/pictures/0" in label for label in labels)
    # Each image follows its own label.
    assert [p["type"] for p in parts] == ["text", "image_url"] * 2


async def test_over_one_database_the_picture_labels_name_no_collection(open_atlas, model):
    model.play(call("search", query=HERON_QUERY, limit=5), answer("Herons."))
    async with open_atlas("atlas", images=True) as client:
        await ask(client, "What do the heron pictures show?")
    labels = [p["text"] for p in _shown(model.requests[1]) if p["type"] == "text"]
    assert labels and not any("Collection" in label for label in labels)


async def test_at_most_max_images_pictures_reach_the_model_per_answer_each_once(open_atlas, model):
    model.play(
        call("search", query=HERON_QUERY, limit=5),
        call("search", query=HERON_QUERY, limit=5),
        answer("Herons."),
    )
    async with open_atlas("atlas", images=True, max_images=1) as client:
        await ask(client, "What do the heron pictures show?")
    # The last request carries the whole conversation: one picture, shown once over both searches.
    sent = [image for message in model.requests[2]["messages"] if isinstance(message.get("content"), list)
            for image in _images(message["content"])]
    assert len(sent) == 1 and sent[0] in (MAP_PNG, SKETCH_PNG)
    assert model.requests[2]["messages"][-1]["role"] == "tool"  # the second search showed no new picture


async def test_a_text_only_model_reads_the_captions_and_is_sent_no_image(open_atlas, model):
    model.play(call("search", query=HERON_QUERY, limit=5), answer("Herons."))
    async with open_atlas("atlas", "wiki", images=False) as client:
        await ask(client, "What do the heron pictures show?")
    request = model.requests[1]
    assert all(isinstance(m.get("content"), str | None) for m in request["messages"])
    result = request["messages"][-1]["content"]
    assert request["messages"][-1]["role"] == "tool"
    assert "Pictures:\n- Picture #/pictures/0 of Chunk ID" in result
    assert f"(Collection: atlas): {MAP_CAPTION}" in result
    assert "#/pictures/1" not in result  # nothing to say about a picture without caption or description


async def test_max_images_zero_shows_no_pictures(open_atlas, model):
    model.play(call("search", query=HERON_QUERY, limit=5), answer("Herons."))
    async with open_atlas("atlas", images=True, max_images=0) as client:
        await ask(client, "What do the heron pictures show?")
    last = model.requests[1]["messages"][-1]
    assert last["role"] == "tool" and "Pictures:" not in last["content"]


async def test_mcp_returns_a_results_pictures_as_labelled_image_content(open_atlas, atlas):
    from mcp import Client

    from haiku.rag.mcp.server import create_mcp_server

    map_chunk = atlas["chunk_ids"][1]
    async with open_atlas("atlas", "wiki", images=False) as rag:
        server = create_mcp_server(client=rag)
        async with Client(server) as client:
            shown = await client.call_tool("get_result_pictures", {"chunk_id": map_chunk, "source": "atlas"})
            none = await client.call_tool("get_result_pictures", {"chunk_id": atlas["chunk_ids"][0], "source": "atlas"})
    kinds = [block.type for block in shown.content]
    assert kinds == ["text", "image"]
    label, image = shown.content
    assert label.text == f"Picture #/pictures/0 of Chunk ID {map_chunk} (Collection: atlas): {MAP_CAPTION}"
    assert (image.mime_type, base64.b64decode(image.data)) == ("image/png", MAP_PNG)
    assert [block.text for block in none.content] == [f"Chunk {atlas['chunk_ids'][0]} holds no pictures."]
