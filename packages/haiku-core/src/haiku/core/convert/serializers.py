"""How docling documents become markdown and chunk text (docs/ingester.md, "Chunks").

Two rules on top of docling's own serializers:

- inline content (a paragraph holding inline code, bold, a link) is one run of
  text: its parts are joined by a space, except before closing punctuation and
  after an opening bracket, so "a `top_n`." stays as written;
- a chunk cut from such a paragraph keeps that text (``InlineKeepingChunker``),
  where docling would re-serialize each part alone, fencing inline code as a
  block and putting each part on its own line.
"""

from __future__ import annotations

from typing import Any

_CLOSING = tuple(".,;:!?)]}%")
_OPENING = tuple("([{")


def join_inline(parts: list[str]) -> str:
    """The parts of one inline run, spaced as prose is."""
    text = ""
    for part in parts:
        if text and not (part.startswith(_CLOSING) or text.endswith(_OPENING)):
            text += " "
        text += part
    return text


def _inline_serializer() -> Any:
    from docling_core.transforms.serializer.base import SerializationResult
    from docling_core.transforms.serializer.common import create_ser_result
    from docling_core.transforms.serializer.markdown import MarkdownInlineSerializer

    class InlineSerializer(MarkdownInlineSerializer):
        def serialize(  # type: ignore[override]
            self, *, item: Any, doc_serializer: Any, doc: Any, list_level: int = 0, visited: Any = None, **kwargs: Any
        ) -> SerializationResult:
            parts = doc_serializer.get_parts(
                item=item,
                list_level=list_level,
                is_inline_scope=True,
                visited=visited if visited is not None else set(),
                **kwargs,
            )
            return create_ser_result(text=join_inline([p.text for p in parts if p.text]), span_source=parts)

    return InlineSerializer()


def export_markdown(document: Any) -> str:
    """The document as markdown: docling's ``export_to_markdown`` with the inline rule."""
    from docling_core.transforms.serializer.markdown import MarkdownDocSerializer, MarkdownParams
    from docling_core.types.doc.document import DEFAULT_CONTENT_LAYERS, DOCUMENT_TOKENS_EXPORT_LABELS

    params = MarkdownParams(labels=DOCUMENT_TOKENS_EXPORT_LABELS, layers=DEFAULT_CONTENT_LAYERS)
    serializer = MarkdownDocSerializer(doc=document, params=params, inline_serializer=_inline_serializer())
    return serializer.serialize().text


def chunking_serializers(*, plain_text: bool = False) -> Any:
    """docling's chunking serializers with the inline rule; ``plain_text`` also drops the
    markdown hard breaks ("  \\n") they add to a line break inside a paragraph, so plain
    text reaches the chunks as its lines were."""
    from docling_core.transforms.chunker.hierarchical_chunker import (
        ChunkingDocSerializer,
        ChunkingSerializerProvider,
    )
    from docling_core.transforms.serializer.markdown import MarkdownTextSerializer

    class PlainTextSerializer(MarkdownTextSerializer):
        def _md_line_breaks(self, text: str) -> str:
            return text

    inline = _inline_serializer()

    class Provider(ChunkingSerializerProvider):
        def get_serializer(self, doc: Any) -> Any:
            if plain_text:
                return ChunkingDocSerializer(doc=doc, inline_serializer=inline, text_serializer=PlainTextSerializer())
            return ChunkingDocSerializer(doc=doc, inline_serializer=inline)

    return Provider()


def inline_keeping_chunker(**options: Any) -> Any:
    """docling's HybridChunker, except that a chunk holding inline content keeps its text
    (split as plain text when it is over the token budget)."""
    from docling.chunking import HybridChunker
    from docling_core.transforms.chunker.hierarchical_chunker import DocChunk, DocMeta
    from docling_core.types.doc import GroupLabel

    class InlineKeepingChunker(HybridChunker):
        def _split_by_doc_items(self, doc_chunk: Any, doc_serializer: Any) -> list[Any]:
            doc = getattr(doc_serializer, "doc", None)
            inline = doc is not None and any(
                getattr(item.parent.resolve(doc), "label", None) == GroupLabel.INLINE
                for item in doc_chunk.meta.doc_items
                if item.parent is not None
            )
            if not inline:
                return super()._split_by_doc_items(doc_chunk, doc_serializer)
            meta = DocMeta(
                doc_items=doc_chunk.meta.doc_items, headings=doc_chunk.meta.headings, origin=doc_chunk.meta.origin
            )
            return [DocChunk(text=doc_chunk.text, meta=meta)]

    return InlineKeepingChunker(**options)
