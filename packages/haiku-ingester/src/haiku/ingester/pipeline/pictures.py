"""A converted document's pictures, described and made searchable before it is embedded (docs/pictures.md).

Each description becomes text of the chunk that holds its picture: the chunk
cut from the picture or its caption, else the chunk of the nearest item
before it (the picture's place in the reading order), else a chunk of its own.
That chunk then names the picture among its item refs, so ``ask`` finds it
there. A picture without a caption takes its description as caption.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from haiku.core.config import AppConfig
from haiku.core.convert import ConvertedDocument
from haiku.core.convert.document import ConvertedChunk, embed_text
from haiku.core.picture_holder import holding_chunk
from haiku.ingester.logs import get_logger
from haiku.ingester.pipeline.describe import Described, PictureDescriber, VisionModel, api_key
from haiku.ingester.pipeline.description_cache import CACHE_FILE, DescriptionCache

DESCRIPTION_LABEL = "Picture:"


def apply_descriptions(converted: ConvertedDocument, descriptions: Mapping[str, str]) -> None:
    """Put each description (by picture ref) into the chunk holding the picture, in place."""
    structure = converted.structure
    if structure is None or not descriptions:
        return
    items = structure.items
    by_ref = {item.self_ref: item for item in items}
    for ref, text in descriptions.items():
        item = by_ref.get(ref)
        if item is None:
            continue
        if not (item.caption or "").strip():
            item.caption = text
        line = f"{DESCRIPTION_LABEL} {text}"
        chunk = holding_chunk(converted.chunks, items, ref)
        if chunk is None:
            chunk = ConvertedChunk(content="", embed_text="", page_numbers=list(item.page_numbers), boxes=list(item.boxes))
            converted.chunks.append(chunk)
        chunk.content = f"{chunk.content}\n\n{line}" if chunk.content else line
        chunk.embed_text = embed_text(chunk.headings, chunk.content)
        if ref not in chunk.item_refs:
            chunk.item_refs.append(ref)
            chunk.boxes.extend(item.boxes)


async def describe_pictures(
    describer: PictureDescriber, converted: ConvertedDocument, **where: Any
) -> Described | None:
    """Describe the document's stored pictures and apply the descriptions; logs the time it took."""
    structure = converted.structure
    if structure is None or not structure.images:
        return None
    described = await describer.describe(structure.images)
    apply_descriptions(converted, described.descriptions)
    log = get_logger().bind(**where)
    log.info("pictures described", **described.as_log())
    for failure in described.failed:
        log.warning("picture left without a description", why=failure)
    return described


def check_picture_model(config: AppConfig) -> None:
    """What ``picture_describer`` would refuse, checked before anything opens or is created."""
    processing = config.processing
    if processing.pictures == "description" and processing.picture_model is not None:
        api_key(processing.picture_model)


def picture_describer(config: AppConfig) -> PictureDescriber | None:
    """The describer ``processing.pictures: description`` calls for; None in the other modes."""
    processing = config.processing
    if processing.pictures != "description" or processing.picture_model is None:
        return None
    model = VisionModel(processing.picture_model)
    return PictureDescriber(model, DescriptionCache(config.queue_path.parent / CACHE_FILE))
