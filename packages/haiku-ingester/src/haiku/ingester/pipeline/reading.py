"""Reading a file's bytes and converting them, wherever the bytes are read (docs/scale-out.md).

On the local engine, and for folder sources, the ingester reads the bytes and
hands them to the converter. With the Ray engine, an object-storage source's
bytes are read by the Ray worker that converts them, with the source's storage
options and the worker's own credentials: they never pass through the
ingester. Either way the content hash comes back, and a file whose bytes hash
to ``known_hash`` (the stored document's) is not converted.
"""

from __future__ import annotations

import asyncio
from typing import Any

from haiku.core.convert import ConvertedDocument
from haiku.ingester.sources.files import FileFacts, content_hash


async def read_and_convert(
    converter: Any, source: Any, facts: FileFacts, *, max_file_size: int, known_hash: str | None
) -> tuple[str, ConvertedDocument | None]:
    """``(content hash, converted document)``; the document is None when the hash is ``known_hash``."""
    remote = getattr(source, "object_ref", None)
    convert_object = getattr(converter, "convert_object", None)
    if remote is not None and convert_object is not None:
        return await convert_object(
            name=str(facts.path), fmt=facts.format, ref=remote(facts), max_file_size=max_file_size,
            known_hash=known_hash,
        )  # fmt: skip
    data = await asyncio.to_thread(source.read, facts, max_file_size=max_file_size)
    digest = content_hash(data)
    if digest == known_hash:
        return digest, None
    return digest, await converter.convert(name=str(facts.path), fmt=facts.format, data=data)
