"""How docling documents become chunk text (docs/ingester.md, "Chunks")."""

from __future__ import annotations

from typing import Any


def plain_text_serializers() -> Any:
    """docling's chunking serializers, less the markdown hard breaks ("  \\n") they add to a
    line break inside a paragraph: plain text reaches the chunks as its lines were."""
    from docling_core.transforms.chunker.hierarchical_chunker import (
        ChunkingDocSerializer,
        ChunkingSerializerProvider,
    )
    from docling_core.transforms.serializer.markdown import MarkdownTextSerializer

    class PlainTextSerializer(MarkdownTextSerializer):
        def _md_line_breaks(self, text: str) -> str:
            return text

    class PlainTextDocSerializer(ChunkingDocSerializer):
        text_serializer: Any = PlainTextSerializer()

    class PlainTextProvider(ChunkingSerializerProvider):
        def get_serializer(self, doc: Any) -> Any:
            return PlainTextDocSerializer(doc=doc)

    return PlainTextProvider()
