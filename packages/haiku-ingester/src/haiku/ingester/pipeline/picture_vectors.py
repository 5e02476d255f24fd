"""A converted document's pictures embedded as images, for image queries (docs/pictures.md, "Image queries").

Only with a multimodal embedder (``embeddings.model.provider:
openai-multimodal``) and pictures kept (``processing.pictures`` other than
``none``): each stored picture gets one vector, written with the document
(``DocumentStructure.image_vectors``). With a text-only embedder nothing is
done. A failing endpoint fails the document, as it does for chunk texts.
"""

from __future__ import annotations

import time
from typing import Any

from haiku.core.convert import ConvertedDocument
from haiku.core.embedders import Embedder, is_multimodal
from haiku.ingester.logs import get_logger


async def embed_pictures(embedder: Embedder, converted: ConvertedDocument, **where: Any) -> int:
    """Give each stored picture of ``converted`` its image vector; returns how many were embedded."""
    structure = converted.structure
    if structure is None or not structure.images or not is_multimodal(embedder):
        return 0
    refs = list(structure.images)
    started = time.monotonic()
    vectors = await embedder.embed_images([structure.images[ref] for ref in refs])  # type: ignore[attr-defined]
    structure.image_vectors = dict(zip(refs, vectors, strict=True))
    seconds = round(time.monotonic() - started, 3)
    get_logger().bind(**where).info("pictures embedded", pictures=len(refs), embed_s=seconds)
    return len(refs)
