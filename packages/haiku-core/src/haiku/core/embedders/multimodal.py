"""A multimodal embedding endpoint over HTTP: texts and images in one vector space (docs/pictures.md).

``embeddings.model.provider: openai-multimodal`` speaks the OpenAI-compatible
``POST {base_url}/embeddings`` that vLLM serves for multimodal embedding
models (VLM2Vec, DSE-Qwen2, GME…):

* texts as any OpenAI embeddings request, ``{"model": …, "input": [texts]}``,
  in batches of ``embeddings.batch_size`` (``OpenAIEmbedder``);
* each image as one chat-style request, ``{"model": …, "messages": [{"role":
  "user", "content": [{"type": "image_url", "image_url": {"url":
  "data:image/png;base64,…"}}, ({"type": "text", "text": image_prompt})]}],
  "encoding_format": "float"}``, at most ``image_concurrency`` at once.

Both answer ``{"data": [{"index": 0, "embedding": [floats]}]}``. The identity
records ``multimodal``: a database written by it keeps one vector per stored
picture, which image queries search.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Sequence
from pathlib import Path

from haiku.core.config.embeddings import EmbeddingModelConfig
from haiku.core.embedders.openai_compatible import OpenAIEmbedder
from haiku.core.errors import ImageQueryError

# The formats an image query may come in, by their first bytes.
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def image_type(data: bytes) -> str | None:
    """The MIME type of PNG, JPEG, GIF or WebP bytes; ``None`` for anything else."""
    for magic, mime in _MAGIC:
        if data.startswith(magic):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_data_url(data: bytes) -> str:
    mime = image_type(data)
    if mime is None:
        raise ImageQueryError("the image is not a PNG, JPEG, GIF or WebP file")
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def read_image(image: bytes | str | Path) -> bytes:
    """The bytes of an image query (bytes as given, or a file's), checked to be a picture format."""
    if isinstance(image, bytes):
        if image_type(image) is None:
            raise ImageQueryError("the image given is not a PNG, JPEG, GIF or WebP file")
        return image
    path = Path(image).expanduser()
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ImageQueryError(f"image file {path} does not exist") from None
    except IsADirectoryError:
        raise ImageQueryError(f"image file {path} is a directory") from None
    except OSError as exc:
        raise ImageQueryError(f"image file {path} cannot be read: {exc.strerror or exc}") from None
    if image_type(data) is None:
        raise ImageQueryError(f"image file {path} is not a PNG, JPEG, GIF or WebP file")
    return data


class MultimodalEmbedder(OpenAIEmbedder):
    """``OpenAIEmbedder`` for texts, plus ``embed_images`` over the same endpoint (see the module docstring)."""

    def __init__(self, model: EmbeddingModelConfig, batch_size: int) -> None:
        super().__init__(model, batch_size)
        self._image_prompt = model.image_prompt
        self._image_slots = model.image_concurrency

    def image_request(self, data: bytes) -> dict:
        """The request body that embeds one image."""
        content: list[dict] = [{"type": "image_url", "image_url": {"url": image_data_url(data)}}]
        if self._image_prompt:
            content.append({"type": "text", "text": self._image_prompt})
        return {"model": self._name, "messages": [{"role": "user", "content": content}], "encoding_format": "float"}

    async def embed_image(self, data: bytes) -> list[float]:
        return (await self._post(self.image_request(data), 1, "images"))[0]

    async def embed_images(self, images: Sequence[bytes]) -> list[list[float]]:
        """One vector per image, in order; at most ``image_concurrency`` requests at once."""
        slots = asyncio.Semaphore(self._image_slots)

        async def one(data: bytes) -> list[float]:
            async with slots:
                return await self.embed_image(data)

        return list(await asyncio.gather(*(one(data) for data in images)))
