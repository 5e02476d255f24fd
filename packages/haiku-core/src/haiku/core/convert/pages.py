"""Page images of a PDF or a scan, rendered one page at a time (docs/ingester.md, "Structure, pictures and page images").

docling's own page images (``generate_page_images``) keep every page of a
document as a decoded image until the whole document is assembled: about
3.5 MB a page measured at scale 1, so a 500-page manual would need 1.7 GB.
Here each page is rendered with pdfium (the renderer docling uses), encoded
as PNG and handed on before the next one is rendered, so memory holds one
page at a time whatever the length of the file.

Pages are stored as 256-colour PNGs (median-cut palette, dithered): a text
page of a manual at scale 1 takes about 9-45 kB that way against 22-117 kB as
full-colour PNG, and encodes faster. That is lossless for text and line art
on pages with few colours and close enough for photographs, since a page image
is there to show where a passage lies, not to reproduce the picture (pictures
keep their own full image).

An image file (a scan) is its own page image, each page of a TIFF one: scaled
so its long side is at most ``IMAGE_PAGE_SIDE`` pixels times
``processing.page_image_scale``, its boxes being in the image's pixels, so
``visualize`` draws the lines OCR read on it.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

from haiku.core.models import PageImage

IMAGE_PAGE_SIDE = 1200  # pixels on the long side of a scan's page image at page_image_scale 1


def _png(image: Any) -> bytes:
    buffer = io.BytesIO()
    image.quantize(256).save(buffer, format="PNG")
    return buffer.getvalue()


def render_image_pages(data: bytes, scale: float) -> Iterator[PageImage]:
    """Each page of the image file in ``data`` (every frame of a TIFF) as PNG, in page order;
    ``scale``: ``processing.page_image_scale``."""
    from PIL import Image

    from haiku.core.convert.scan_images import image_pages

    for number, frame in enumerate(image_pages("image", data), start=1):
        factor = min(1.0, IMAGE_PAGE_SIDE * scale / max(frame.size))
        size = (max(1, round(frame.width * factor)), max(1, round(frame.height * factor)))
        image = frame.convert("RGB").resize(size, Image.BILINEAR)
        yield PageImage(page=number, width=image.width, height=image.height, scale=factor, png=_png(image))
        del image


def render_pdf_pages(data: bytes, scale: float) -> Iterator[PageImage]:
    """Each page of the PDF in ``data`` as PNG, ``scale`` pixels per page point, in page order."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(data)
    try:
        for index in range(len(pdf)):
            page = pdf[index]
            try:
                image = page.render(scale=scale).to_pil()
            finally:
                page.close()
            yield PageImage(page=index + 1, width=image.width, height=image.height, scale=scale, png=_png(image))
            del image
    finally:
        pdf.close()
