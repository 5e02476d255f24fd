"""A chunk's boxes drawn on a stored page image: page points times the image's scale
(docs/client.md#pictures-and-pages)."""

from __future__ import annotations

import io

from PIL import Image

from haiku.core.models import Box, PageImage
from haiku.rag.client._drawing import draw_boxes, pixel_box

WHITE = (255, 255, 255)


def _page(width: int = 300, height: int = 400, scale: float = 0.5, page: int = 3) -> PageImage:
    out = io.BytesIO()
    Image.new("RGB", (width, height), WHITE).save(out, format="PNG")
    return PageImage(page=page, width=width, height=height, scale=scale, png=out.getvalue())


def test_a_box_in_page_points_lands_on_the_pixels_times_the_scale():
    page = _page(scale=0.5)
    assert pixel_box(Box(page=3, left=100, top=200, right=300, bottom=400), page) == (50, 100, 150, 200)


def test_a_box_past_the_page_edge_is_clipped_to_the_image():
    page = _page(width=300, height=400, scale=1.0)
    assert pixel_box(Box(page=3, left=-20, top=350, right=900, bottom=999), page) == (0, 350, 299, 399)


def test_the_drawn_page_shades_inside_the_box_outlines_it_and_leaves_the_rest_alone():
    page = _page(scale=0.5)
    drawn = draw_boxes(page, [Box(page=3, left=100, top=200, right=300, bottom=400)])
    assert drawn.info["page"] == 3 and drawn.size == (300, 400)
    assert drawn.getpixel((100, 150)) != WHITE  # inside: shaded
    outline = drawn.getpixel((50, 150))
    assert outline[0] > 150 and outline[1] < 100  # the edge: red
    assert drawn.getpixel((250, 350)) == WHITE and drawn.getpixel((10, 10)) == WHITE


def test_every_box_of_the_page_is_drawn():
    page = _page(scale=1.0)
    boxes = [Box(page=3, left=10, top=10, right=60, bottom=40), Box(page=3, left=100, top=300, right=200, bottom=350)]
    drawn = draw_boxes(page, boxes)
    assert drawn.getpixel((35, 25)) != WHITE and drawn.getpixel((150, 325)) != WHITE
    assert drawn.getpixel((150, 150)) == WHITE
