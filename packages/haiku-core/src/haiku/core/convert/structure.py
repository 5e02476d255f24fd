"""What a converted document keeps beside its text (docs/ingester.md, "Structure, pictures and page images").

From the docling document: one ``DocumentItem`` per item in document order
(its label, pages, boxes in page points with a top-left origin, text, caption,
parent), the PNG of each picture within the ``processing`` bounds, and the
docling document itself as compressed JSON with its pictures left out (they
are stored once, as items). Chunks get the refs and boxes of the items they
were cut from. Page images are rendered apart (``pages``), one page at a time.
"""

from __future__ import annotations

import base64
import io
import json
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

from haiku.core.models import Box, DocumentItem, DocumentStructure

PICTURES_CAPPED = "pictures_capped"  # the document metadata key saying the picture cap was hit


@dataclass(frozen=True)
class StructureOptions:
    """The ``processing`` keys that bound what a document keeps (docs/configuration.md)."""

    page_images: bool = True
    page_image_scale: float = 1.0
    pictures: str = "image"  # none | image
    min_picture_px: int = 64
    max_pictures: int = 500

    @classmethod
    def from_processing(cls, processing: Any) -> StructureOptions:
        return cls(
            page_images=processing.page_images,
            page_image_scale=processing.page_image_scale,
            # description stores pictures as image does; the ingester describes them (docs/pictures.md)
            pictures="none" if processing.pictures == "none" else "image",
            min_picture_px=processing.min_picture_px,
            max_pictures=processing.max_pictures,
        )


@dataclass
class ExtractedStructure:
    """The structure of one document and what the document metadata should say of it."""

    structure: DocumentStructure
    metadata: dict[str, Any]


@cache
def docling_version() -> str:
    """The docling-core version whose document model the stored JSON follows."""
    from importlib.metadata import version

    return version("docling-core")


def boxes_of(item: Any, document: Any) -> list[Box]:
    """The item's provenance boxes, in page points from the page's top-left corner."""
    boxes: list[Box] = []
    for prov in getattr(item, "prov", None) or []:
        page = document.pages.get(prov.page_no)
        if page is None or page.size is None:
            continue
        bbox = prov.bbox.to_top_left_origin(page_height=page.size.height)
        left, right = sorted((float(bbox.l), float(bbox.r)))
        top, bottom = sorted((float(bbox.t), float(bbox.b)))
        boxes.append(Box(page=int(prov.page_no), left=left, top=top, right=right, bottom=bottom))
    return boxes


def chunk_location(items: Iterable[Any], document: Any) -> tuple[list[str], list[Box]]:
    """The refs and boxes of the items a chunk was cut from."""
    refs: list[str] = []
    boxes: list[Box] = []
    for item in items:
        if item.self_ref not in refs:
            refs.append(item.self_ref)
            boxes.extend(boxes_of(item, document))
    return refs, boxes


def _png_of(image_ref: Any) -> bytes | None:
    """The picture's PNG bytes: the data URI docling keeps, re-encoded only when it is not PNG."""
    uri = str(image_ref.uri)
    if uri.startswith("data:image/png;base64,"):
        return base64.b64decode(uri.split(",", 1)[1])
    pil = getattr(image_ref, "pil_image", None)
    if pil is None:
        return None
    buffer = io.BytesIO()
    pil.save(buffer, format="PNG")
    return buffer.getvalue()


def _text_of(item: Any, document: Any) -> str:
    from docling_core.types.doc import TableItem

    if isinstance(item, TableItem):
        return item.export_to_markdown(document)
    return str(getattr(item, "text", "") or "")


def _caption_of(item: Any, document: Any) -> str | None:
    caption = item.caption_text(document) if hasattr(item, "caption_text") else ""
    return caption or None


def extract_structure(document: Any, options: StructureOptions) -> ExtractedStructure:
    """The document's items, picture PNGs and compressed JSON; drops the pictures' images from ``document``."""
    from docling_core.types.doc import DocItem, PictureItem

    items: list[DocumentItem] = []
    images: dict[str, bytes] = {}
    found = 0
    for node, _level in document.iterate_items(with_groups=False):
        if not isinstance(node, DocItem):
            continue
        has_image = False
        if isinstance(node, PictureItem) and node.image is not None:
            size = node.image.size
            if min(size.width, size.height) < options.min_picture_px:
                continue  # an icon, a rule, a bullet: not a picture worth keeping
            found += 1
            if options.pictures == "image" and len(images) < options.max_pictures:
                data = _png_of(node.image)
                if data is not None:
                    images[node.self_ref] = data
                    has_image = True
        parent = node.parent.cref if node.parent is not None else None
        items.append(
            DocumentItem(
                self_ref=node.self_ref,
                label=str(node.label.value),
                order=len(items),
                page_numbers=sorted({int(p.page_no) for p in node.prov or []}),
                boxes=boxes_of(node, document),
                text=_text_of(node, document),
                caption=_caption_of(node, document),
                parent_ref=None if parent in (None, "#/body") else parent,
                has_image=has_image,
            )
        )
    for picture in document.pictures:
        picture.image = None  # stored once, as the item's image
    for page in document.pages.values():
        page.image = None  # stored once per page, apart
    # A file name that is not UTF-8 (a Latin-1 name on disk) reaches the JSON as lone
    # surrogates: they are written as the JSON escapes they are (\udce9), which read back.
    text = json.dumps(document.export_to_dict(), ensure_ascii=False, separators=(",", ":"))
    payload = text.encode("utf-8", "backslashreplace")
    metadata: dict[str, Any] = {}
    if options.pictures == "image" and found > options.max_pictures:
        metadata[PICTURES_CAPPED] = {"found": found, "stored": len(images), "max_pictures": options.max_pictures}
    structure = DocumentStructure(
        docling_document=zlib.compress(payload, 6), docling_version=docling_version(), items=items, images=images
    )
    return ExtractedStructure(structure, metadata)
