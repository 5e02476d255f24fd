"""The pages of an image file, each checked before it is decoded (docs/ingester.md, "Scanned pages (OCR)").

An image whose declared size is over ``MAX_PIXELS`` is refused before a pixel
of it is decoded (an image bomb); every page of a TIFF (a multi-page scan) is a
page, each checked the same way; any other format is one picture (the frames
of an animated WebP are not pages).
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

from haiku.core.errors import ConversionError

MAX_PIXELS = 40_000_000  # 40 megapixels: an A4 page at 600 dpi is 35


def open_image(name: str, data: bytes) -> Any:
    """The image, its declared size checked before any pixel is decoded."""
    from PIL import Image

    try:
        image = Image.open(io.BytesIO(data))
        width, height = image.size
    except Image.DecompressionBombError as exc:
        raise ConversionError(f"{name}: {exc.args[0].split(',')[0]}, {_BOUND}") from None
    except Exception as exc:  # PIL raises many types on bad bytes
        raise ConversionError(f"{name}: not a readable image: {type(exc).__name__}: {exc}") from None
    _check_size(name, width, height)
    _load(name, image)
    return image


_BOUND = f"over the {MAX_PIXELS // 1_000_000} megapixel bound of OCR; refused without decoding it"


def _check_size(name: str, width: int, height: int) -> None:
    if width * height > MAX_PIXELS:
        raise ConversionError(f"{name}: the image declares {width}×{height} pixels, {_BOUND}")


def _load(name: str, image: Any) -> None:
    try:
        image.load()
    except Exception as exc:
        raise ConversionError(f"{name}: the image could not be decoded: {type(exc).__name__}: {exc}") from None


def image_pages(name: str, data: bytes) -> Iterator[Any]:
    """The pages of an image file: every frame of a TIFF, the one picture of any other format.
    The same image object is yielded for each frame, moved on: use a page before taking the next."""
    image = open_image(name, data)
    yield image
    if image.format != "TIFF":
        return
    for index in range(1, getattr(image, "n_frames", 1)):
        try:
            image.seek(index)
        except Exception as exc:
            raise ConversionError(f"{name}: page {index + 1} could not be read: {type(exc).__name__}: {exc}") from None
        _check_size(name, *image.size)
        _load(name, image)
        yield image
