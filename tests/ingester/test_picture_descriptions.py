"""Pictures described by a vision model at ingest (docs/pictures.md).

The vision model is ``VisionServer``, a scripted OpenAI-compatible endpoint on
127.0.0.1 (no vision model can run here); the cache is a real SQLite file.
"""

from __future__ import annotations

import base64
import time
from pathlib import Path

import pytest
from vision_server import DATA_URL, VisionServer, description_of

from haiku.core.config.models import PictureModelConfig
from haiku.ingester.pipeline.describe import PROMPT, PictureDescriber, VisionModel
from haiku.ingester.pipeline.description_cache import DescriptionCache
from support import solid_png

RED, GREEN, BLUE = solid_png((255, 0, 0)), solid_png((0, 255, 0)), solid_png((0, 0, 255))


@pytest.fixture(scope="module")
def vision() -> VisionServer:
    server = VisionServer()
    yield server
    server.close()


@pytest.fixture
def describer_for(vision: VisionServer, tmp_path: Path):
    """A describer over the module's server and this test's cache file; each test closes its own."""

    def make(**settings) -> PictureDescriber:
        config = PictureModelConfig(base_url=vision.base_url, name="scripted-vision", **settings)
        return PictureDescriber(VisionModel(config), DescriptionCache(tmp_path / "cache.db"))

    vision.reset()
    vision.delay_s = 0.0
    yield make
    vision.reset()


async def test_each_picture_is_sent_as_a_png_data_url_with_the_prompt_and_the_model_name(vision, describer_for):
    describer = describer_for()
    try:
        described = await describer.describe({"#/pictures/0": RED, "#/pictures/1": BLUE})
    finally:
        await describer.aclose()
    assert described.descriptions == {"#/pictures/0": description_of(RED), "#/pictures/1": description_of(BLUE)}
    body = vision.requests[0]
    assert body["model"] == "scripted-vision" and body["authorization"] is None
    [message] = body["messages"]
    assert message["role"] == "user"
    assert [p["type"] for p in message["content"]] == ["text", "image_url"]
    assert message["content"][0]["text"] == PROMPT
    assert message["content"][1]["image_url"]["url"].startswith(DATA_URL)
    assert sorted(vision.images()) == sorted([RED, BLUE])


async def test_a_picture_described_before_is_not_sent_again_only_a_new_one_is(vision, describer_for, tmp_path):
    first = describer_for()
    await first.describe({"#/pictures/0": RED, "#/pictures/1": GREEN})
    await first.aclose()
    vision.reset()
    again = describer_for()  # a later run: a new process, the same cache file
    try:
        described = await again.describe({"#/pictures/0": RED, "#/pictures/1": GREEN, "#/pictures/2": BLUE})
    finally:
        await again.aclose()
    assert vision.images() == [BLUE]
    assert (described.asked, described.cached) == (1, 2)
    assert described.descriptions["#/pictures/1"] == description_of(GREEN)


async def test_a_failing_or_silent_model_leaves_those_pictures_undescribed_and_describes_the_rest(vision, describer_for):
    vision.fail.add("#ff0000")
    vision.hang.add("#00ff00")
    describer = describer_for(timeout_s=1.5)
    started = time.perf_counter()
    try:
        described = await describer.describe({"#/pictures/0": RED, "#/pictures/1": GREEN, "#/pictures/2": BLUE})
    finally:
        await describer.aclose()
    assert time.perf_counter() - started < 8
    assert described.descriptions == {"#/pictures/2": description_of(BLUE)}
    failures = sorted(described.failed)
    assert failures[0].startswith("#/pictures/0: HTTP 500")
    assert failures[1] == "#/pictures/1: no answer within 1.5s"
    # A failure is not cached: the next run asks again.
    vision.reset()
    retry = describer_for()
    try:
        again = await retry.describe({"#/pictures/0": RED})
    finally:
        await retry.aclose()
    assert again.asked == 1 and again.descriptions == {"#/pictures/0": description_of(RED)}


async def test_no_more_than_concurrency_pictures_are_sent_at_once(vision, describer_for):
    vision.delay_s = 0.15
    describer = describer_for(concurrency=2)
    images = {f"#/pictures/{i}": solid_png((i * 20, 10, 10)) for i in range(6)}
    try:
        described = await describer.describe(images)
    finally:
        await describer.aclose()
    assert len(described.descriptions) == 6
    assert vision.max_in_flight == 2


async def test_the_key_named_by_api_key_env_is_sent_as_a_bearer_token(vision, describer_for, monkeypatch):
    monkeypatch.setenv("VISION_KEY", "sk-test-123")
    describer = describer_for(api_key_env="VISION_KEY")
    try:
        await describer.describe({"#/pictures/0": RED})
    finally:
        await describer.aclose()
    assert vision.requests[0]["authorization"] == "Bearer sk-test-123"


def test_an_unset_api_key_env_is_refused_naming_the_variable_and_the_key(vision, monkeypatch):
    from haiku.core.errors import InvalidConfigError

    monkeypatch.delenv("VISION_KEY", raising=False)
    config = PictureModelConfig(base_url=vision.base_url, name="v", api_key_env="VISION_KEY")
    with pytest.raises(InvalidConfigError, match=r"^processing\.picture_model\.api_key_env names VISION_KEY, which is unset"):
        VisionModel(config)


async def test_the_request_carries_the_exact_png(vision):
    model = VisionModel(PictureModelConfig(base_url=vision.base_url, name="v"))
    url = model.request(RED)["messages"][0]["content"][1]["image_url"]["url"]
    await model.aclose()
    assert base64.b64decode(url[len(DATA_URL):]) == RED


def test_description_mode_without_a_picture_model_is_a_configuration_error_naming_both_keys():
    from haiku.core.config import config_from_dict
    from haiku.core.errors import InvalidConfigError

    with pytest.raises(InvalidConfigError, match=r"processing: pictures is description but picture_model is not set"):
        config_from_dict({"processing": {"pictures": "description"}})


def _converted(chunk_refs: list[list[str]], *, caption: str | None = None):
    """A converted document: a heading, a paragraph, a picture (with a caption item when
    ``caption``), a closing paragraph; one chunk per entry of ``chunk_refs``."""
    import zlib

    from haiku.core.convert import ConvertedDocument
    from haiku.core.convert.document import ConvertedChunk
    from haiku.core.models import Box, DocumentItem, DocumentStructure

    items = [
        DocumentItem(self_ref="#/texts/0", label="section_header", order=0, text="Herons"),
        DocumentItem(self_ref="#/texts/1", label="text", order=1, text="Herons nest."),
        DocumentItem(self_ref="#/pictures/0", label="picture", order=2, caption=caption, has_image=True,
                     page_numbers=[1], boxes=[Box(page=1, left=10, top=20, right=110, bottom=90)]),
    ]
    if caption:
        items.append(DocumentItem(self_ref="#/texts/2", label="caption", order=3, text=caption, parent_ref="#/pictures/0"))
    items.append(DocumentItem(self_ref="#/texts/3", label="text", order=len(items), text="They fish."))
    text = {"#/texts/1": "Herons nest.", "#/texts/2": caption or "", "#/texts/3": "They fish."}
    chunks = [
        ConvertedChunk(content=" ".join(text[r] for r in refs), embed_text="", headings=["Herons"], item_refs=list(refs))
        for refs in chunk_refs
    ]
    structure = DocumentStructure(docling_document=zlib.compress(b"{}"), docling_version="t", items=items,
                                  images={"#/pictures/0": RED})
    return ConvertedDocument(title="Herons", content="", chunks=chunks, structure=structure)


def test_a_description_joins_the_chunk_cut_from_the_pictures_caption_and_is_embedded():
    from haiku.ingester.pipeline.pictures import apply_descriptions

    converted = _converted([["#/texts/1"], ["#/texts/2"], ["#/texts/3"]], caption="Figure 1: a heron")
    apply_descriptions(converted, {"#/pictures/0": "A red square."})
    contents = [c.content for c in converted.chunks]
    assert contents == ["Herons nest.", "Figure 1: a heron\n\nPicture: A red square.", "They fish."]
    assert converted.chunks[1].embed_text == "Herons\nFigure 1: a heron\n\nPicture: A red square."
    assert converted.chunks[1].item_refs == ["#/texts/2", "#/pictures/0"]
    # The picture keeps its own caption.
    assert converted.structure.items[2].caption == "Figure 1: a heron"


def test_an_uncaptioned_picture_no_chunk_holds_goes_to_the_chunk_before_it_and_takes_the_caption():
    from haiku.ingester.pipeline.pictures import apply_descriptions

    converted = _converted([["#/texts/1"], ["#/texts/3"]])
    apply_descriptions(converted, {"#/pictures/0": "A red square."})
    assert [c.content for c in converted.chunks] == ["Herons nest.\n\nPicture: A red square.", "They fish."]
    assert converted.chunks[0].item_refs == ["#/texts/1", "#/pictures/0"]
    assert [b.page for b in converted.chunks[0].boxes] == [1]
    assert converted.structure.items[2].caption == "A red square."


def test_a_document_without_chunks_gets_one_for_its_described_picture():
    from haiku.ingester.pipeline.pictures import apply_descriptions

    converted = _converted([])
    apply_descriptions(converted, {"#/pictures/0": "A red square."})
    [chunk] = converted.chunks
    assert (chunk.content, chunk.item_refs, chunk.page_numbers) == ("Picture: A red square.", ["#/pictures/0"], [1])
