"""Drawing a chunk's boxes on a stored page image (docs/client.md#pictures-and-pages).

Only ``visualize_chunk`` imports this module, so PIL loads only when a chunk
is drawn: a search never pays for it.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TYPE_CHECKING

from PIL import Image, ImageDraw

if TYPE_CHECKING:
    from haiku.core.models import Box, PageImage

OUTLINE = (220, 38, 38, 255)
FILL = (250, 204, 21, 72)
MIN_WIDTH = 2
PAD_POINTS = 2.0  # the outline stands this far off the text, so it never strikes through it


def pixel_box(box: Box, image: PageImage) -> tuple[int, int, int, int]:
    """A box in page points (top-left origin) as pixels of the page image, inside it."""

    def clamp(value: float, bound: int) -> int:
        return max(0, min(bound - 1, round(value * image.scale)))

    left, right = sorted((clamp(box.left, image.width), clamp(box.right, image.width)))
    top, bottom = sorted((clamp(box.top, image.height), clamp(box.bottom, image.height)))
    return left, top, right, bottom


def draw_boxes(image: PageImage, boxes: Sequence[Box]) -> Image.Image:
    """The page with each box shaded and outlined; ``info["page"]`` is the page number."""
    page = Image.open(io.BytesIO(image.png)).convert("RGBA")
    if page.size != (image.width, image.height):  # the stored size is the truth for the scale
        page = page.resize((image.width, image.height))
    overlay = Image.new("RGBA", page.size, (0, 0, 0, 0))
    pen = ImageDraw.Draw(overlay)
    width = max(MIN_WIDTH, round(2 * image.scale))
    pad = max(1, round(PAD_POINTS * image.scale))
    for box in boxes:
        left, top, right, bottom = pixel_box(box, image)
        padded = (max(0, left - pad), max(0, top - pad), min(page.width - 1, right + pad), min(page.height - 1, bottom + pad))
        pen.rectangle(padded, fill=FILL, outline=OUTLINE, width=width)
    drawn = Image.alpha_composite(page, overlay).convert("RGB")
    drawn.info["page"] = image.page
    return drawn
