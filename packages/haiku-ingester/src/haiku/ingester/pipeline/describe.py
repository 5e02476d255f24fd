"""Describing a document's pictures with a vision model at ingest (docs/pictures.md).

With ``processing.pictures: description`` each stored picture is sent to the
OpenAI-compatible vision endpoint ``processing.picture_model`` names, at most
``concurrency`` at once, each within ``timeout_s``::

    POST {base_url}/chat/completions
    {"model": NAME, "temperature": 0, "max_tokens": 400,
     "messages": [{"role": "user", "content": [
         {"type": "text", "text": PROMPT},
         {"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}}]}]}

and the description is ``choices[0].message.content``. Descriptions are
cached by the image's hash (``DescriptionCache``), so only pictures never
described before are sent. A model that fails, answers nothing or times out
leaves that picture without a description; the document is written anyway.

This is the one heavy step of the pipeline that is neither conversion nor
embedding; it runs in the ingester process, over HTTP, whatever converts.
"""

from __future__ import annotations

import asyncio
import base64
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from haiku.core.config.models import PictureModelConfig
from haiku.core.errors import InvalidConfigError
from haiku.ingester.pipeline.description_cache import DescriptionCache, image_key

PROMPT = (
    "Describe this picture from a document for someone who cannot see it, in at most five sentences: "
    "what it shows, and any title, labels, numbers or text in it. Answer with the description only."
)
MAX_TOKENS = 400
_THINKING = re.compile(r"<think>.*?</think>", re.DOTALL)


class PictureModelFailed(Exception):
    """One picture the vision model did not describe: why, for the log.

    An internal signal, outside the error tree on purpose (``haiku.core.errors``): ``describe``
    catches it, records the picture as failed and goes on, so no caller ever sees it.
    """


@dataclass
class Described:
    """The descriptions of one document's pictures, by item ref, and what it took."""

    descriptions: dict[str, str] = field(default_factory=dict)
    asked: int = 0  # pictures sent to the model
    cached: int = 0  # pictures described before
    failed: list[str] = field(default_factory=list)  # "ref: why"
    seconds: float = 0.0

    def as_log(self) -> dict[str, Any]:
        return {
            "pictures": len(self.descriptions) + len(self.failed),
            "described": len(self.descriptions),
            "asked": self.asked,
            "cached": self.cached,
            "failed": len(self.failed),
            "describe_s": round(self.seconds, 3),
        }


def api_key(config: PictureModelConfig) -> str | None:
    """The key ``api_key_env`` names (``None`` without one); an unset or empty variable is a config error."""
    if not config.api_key_env:
        return None
    key = os.environ.get(config.api_key_env, "").strip()
    if not key:
        raise InvalidConfigError(
            f"processing.picture_model.api_key_env names {config.api_key_env}, which is unset or "
            "empty; export it with the vision model's key, or remove api_key_env"
        )
    return key


class VisionModel:
    """One OpenAI-compatible vision endpoint; ``describe`` one PNG; close with ``aclose``."""

    def __init__(self, config: PictureModelConfig) -> None:
        self.config = config
        self.base_url = config.base_url.rstrip("/")
        headers = {"Content-Type": "application/json"}
        key = api_key(config)
        if key is not None:
            headers["Authorization"] = f"Bearer {key}"
        self._http = httpx.AsyncClient(timeout=httpx.Timeout(config.timeout_s), headers=headers)

    async def aclose(self) -> None:
        await self._http.aclose()

    def request(self, png: bytes) -> dict[str, Any]:
        url = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
        content = [{"type": "text", "text": PROMPT}, {"type": "image_url", "image_url": {"url": url}}]
        return {
            "model": self.config.name,
            "temperature": 0,
            "max_tokens": MAX_TOKENS,
            "messages": [{"role": "user", "content": content}],
        }

    async def describe(self, png: bytes) -> str:
        try:
            response = await asyncio.wait_for(
                self._http.post(f"{self.base_url}/chat/completions", json=self.request(png)),
                timeout=self.config.timeout_s,
            )
        except (TimeoutError, httpx.TimeoutException):
            raise PictureModelFailed(f"no answer within {self.config.timeout_s:g}s") from None
        except httpx.HTTPError as exc:
            raise PictureModelFailed(f"{type(exc).__name__}: {exc or 'connection failed'}") from None
        if response.status_code >= 400:
            raise PictureModelFailed(f"HTTP {response.status_code}: {response.text[:200].strip()}")
        try:
            content = response.json()["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise PictureModelFailed(f"not an OpenAI chat completion: {response.text[:200].strip()}") from None
        text = _THINKING.sub("", content).strip() if isinstance(content, str) else ""
        if not text:
            raise PictureModelFailed("an empty description")
        return text


class PictureDescriber:
    """Describes pictures through ``model``, ``concurrency`` at a time, reusing ``cache``."""

    def __init__(self, model: VisionModel, cache: DescriptionCache) -> None:
        self.model = model
        self.cache = cache
        self._slots = asyncio.Semaphore(model.config.concurrency)

    async def describe(self, images: Mapping[str, bytes]) -> Described:
        """Descriptions of ``images`` (PNG by item ref): cached ones, then the model's."""
        started = time.perf_counter()
        result = Described()
        keys = {ref: image_key(png) for ref, png in images.items()}
        name = self.model.config.name
        known = await asyncio.to_thread(self.cache.get_many, keys.values(), name)
        missing = [ref for ref in images if keys[ref] not in known]
        for ref in images:
            if keys[ref] in known:
                result.descriptions[ref] = known[keys[ref]]
        result.cached = len(images) - len(missing)

        async def one(ref: str) -> None:
            async with self._slots:
                try:
                    text = await self.model.describe(images[ref])
                except PictureModelFailed as exc:
                    result.failed.append(f"{ref}: {exc}")
                    return
            result.descriptions[ref] = text
            await asyncio.to_thread(self.cache.put, keys[ref], name, text)

        result.asked = len(missing)
        await asyncio.gather(*(one(ref) for ref in missing))
        result.seconds = time.perf_counter() - started
        return result

    async def aclose(self) -> None:
        await self.model.aclose()
        self.cache.close()
