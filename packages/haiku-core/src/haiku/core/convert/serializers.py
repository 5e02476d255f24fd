"""How docling documents become markdown and chunk text (docs/ingester.md, "Pipeline").

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
    serializer = MarkdownDocSerializer(
        doc=document,
        params=params,
        inline_serializer=_inline_serializer(),
        text_serializer=_text_serializer(plain_text=False),
    )
    return serializer.serialize().text


def _text_serializer(*, plain_text: bool) -> Any:
    """docling's markdown text serializer; a code block names its language on its fence, and
    ``plain_text`` drops the markdown hard breaks ("  \\n") added to a line break inside a
    paragraph, so plain text reaches the chunks as its lines were."""
    from docling_core.transforms.serializer.common import create_ser_result
    from docling_core.transforms.serializer.markdown import MarkdownTextSerializer
    from docling_core.types.doc import CodeItem, CodeLanguageLabel

    class TextSerializer(MarkdownTextSerializer):
        def serialize(self, *, item: Any, doc_serializer: Any, doc: Any, **kwargs: Any) -> Any:
            language = getattr(item, "code_language", CodeLanguageLabel.UNKNOWN)
            if isinstance(item, CodeItem) and language != CodeLanguageLabel.UNKNOWN and not kwargs.get("is_inline_scope"):
                fence = "````" if "```" in item.text else "```"
                return create_ser_result(text=f"{fence}{language.value.lower()}\n{item.text}\n{fence}", span_source=item)
            return super().serialize(item=item, doc_serializer=doc_serializer, doc=doc, **kwargs)

        def _md_line_breaks(self, text: str) -> str:
            return text if plain_text else super()._md_line_breaks(text)

    return TextSerializer()


def _table_serializer() -> Any:
    """Tables as ``table_text`` reads them: one line per row, each cell naming its row and column."""
    from docling_core.transforms.serializer.base import BaseTableSerializer
    from docling_core.transforms.serializer.common import create_ser_result
    from docling_core.types.doc import RichTableCell

    from haiku.core.convert.sheets import table_comments
    from haiku.core.convert.table_text import grid_of, table_lines

    class TableSerializer(BaseTableSerializer):
        def serialize(self, *, item: Any, doc_serializer: Any, doc: Any, **kwargs: Any) -> Any:
            parts = []
            caption = doc_serializer.serialize_captions(item=item, **kwargs)
            if caption.text:
                parts.append(caption)
            if item.self_ref not in doc_serializer.get_excluded_refs(**kwargs):
                # A rich cell's items are this table's: they count as visited once it is written.
                visited = kwargs.get("visited")
                local = {**kwargs, "visited": set(visited)} if visited is not None else kwargs

                def text_of(cell: Any) -> str:
                    if isinstance(cell, RichTableCell):
                        return doc_serializer.serialize(item=cell.ref.resolve(doc), **local).text
                    return str(cell.text)

                by_cell, rest = table_comments(item, doc)
                data = item.data
                grid = grid_of(data.num_rows, data.num_cols, data.table_cells, text_of, by_cell)
                lines = table_lines(grid) + [f"({note})" for note in rest]
                if lines:
                    if visited is not None:
                        visited.update(local["visited"])
                    parts.append(create_ser_result(text="\n".join(lines), span_source=item))
            return create_ser_result(text="\n\n".join(p.text for p in parts), span_source=parts)

    return TableSerializer()


def chunking_serializers(*, plain_text: bool = False) -> Any:
    """docling's chunking serializers with the inline and code-fence rules (``_text_serializer``)
    and tables read by ``table_text``."""
    from docling_core.transforms.chunker.hierarchical_chunker import (
        ChunkingDocSerializer,
        ChunkingSerializerProvider,
    )

    inline = _inline_serializer()
    text = _text_serializer(plain_text=plain_text)
    table = _table_serializer()

    class Provider(ChunkingSerializerProvider):
        def get_serializer(self, doc: Any) -> Any:
            return ChunkingDocSerializer(
                doc=doc, inline_serializer=inline, text_serializer=text, table_serializer=table
            )

    return Provider()


def inline_keeping_chunker(**options: Any) -> Any:
    """docling's HybridChunker, except that a chunk holding inline content keeps its text
    (split as plain text when it is over the token budget), and a table over the budget is
    split between its cells.

    A table reaches a chunk as "row, column = value" sentences, a line per row
    (``table_text``). docling's header-repeating split (``repeat_table_header``, on by default) expects a
    markdown table instead: it found no header in that line, put a stray ``| - |`` before
    every piece, cut cells in half, and searched the whole remaining line again for every
    piece, so a 400-row CSV took 22 s to chunk (2,000 rows: past the conversion limit).
    Split as text, every piece ends between two rows or two cells, each naming its row and
    column, and the same table chunks in 0.6 s (docs/ingester.md, "Pipeline").
    """
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

    return InlineKeepingChunker(**{"repeat_table_header": False, **options})
