"""Pictures described by a vision model at ingest (docs/pictures.md).

The vision model is ``VisionServer``, a scripted OpenAI-compatible endpoint on
127.0.0.1 (no vision model can run here); the cache is a real SQLite file.
"""

from __future__ import annotations

import base64
import io
import time
from pathlib import Path

import pytest
from vision_server import DATA_URL, VisionServer, description_of

from haiku.core.config.models import PictureModelConfig
from haiku.ingester.pipeline.describe import PROMPT, PictureDescriber, VisionModel
from haiku.ingester.pipeline.description_cache import DescriptionCache


def png(colour: tuple[int, int, int], size: tuple[int, int] = (96, 72)) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="PNG")
    return buffer.getvalue()


RED, GREEN, BLUE = png((255, 0, 0)), png((0, 255, 0)), png((0, 0, 255))


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
    images = {f"#/pictures/{i}": png((i * 20, 10, 10)) for i in range(6)}
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
    from haiku.core.errors import MissingEnvVarError

    monkeypatch.delenv("VISION_KEY", raising=False)
    config = PictureModelConfig(base_url=vision.base_url, name="v", api_key_env="VISION_KEY")
    with pytest.raises(MissingEnvVarError, match=r"VISION_KEY is unset .*processing\.picture_model\.api_key_env"):
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
