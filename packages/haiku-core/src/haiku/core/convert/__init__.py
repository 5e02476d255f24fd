"""The converter: a file's bytes to a titled document and its chunks (docs/ingester.md).

The ingester's conversion workers and any client convert the same way through
``Converter``. docling comes with the ``convert`` extra (``haiku-core[convert]``)
and is imported only when a ``Converter`` is built; the result types and
``embed_text`` need nothing beyond haiku-core. Async code converts files on
disk with ``AsyncFileConverter`` (``convert``, ``chunk``, ``generate_title``
awaited off the event loop).
"""

from haiku.core.convert.document import ConvertedChunk, ConvertedDocument, embed_text

__all__ = ["AsyncFileConverter", "ConvertedChunk", "ConvertedDocument", "Converter", "embed_text"]


def __getattr__(name: str):
    if name == "Converter":
        from haiku.core.convert.converter import Converter

        return Converter
    if name == "AsyncFileConverter":
        from haiku.core.convert.asynchronous import AsyncFileConverter

        return AsyncFileConverter
    raise AttributeError(name)
