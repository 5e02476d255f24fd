"""Convert a file's bytes to a document and its chunks (runs inside a conversion worker).

docling-slim converts markdown, html and docx with its declarative backends and
PDFs with the native, model-free text pipeline (no layout or OCR model, nothing
downloaded). Plain text is taken as is. Chunks come from docling's HybridChunker
with the embedding model's tokenizer, so ``processing.chunk_size`` counts the
tokens the encoder will see, headings included.

A document's title is its first heading; else, for a PDF, the title its
metadata records; else, for plain text and PDFs (whose text pipeline finds no
headings), a first paragraph that reads as a title (``title_line``); else the
file name.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CONVERTIBLE = {"md", "html", "docx", "pdf"}


@dataclass
class ConvertedChunk:
    content: str
    embed_text: str
    headings: list[str] = field(default_factory=list)
    page_numbers: list[int] = field(default_factory=list)


@dataclass
class ConvertedDocument:
    title: str
    content: str
    chunks: list[ConvertedChunk]


def embed_text(headings: list[str], content: str) -> str:
    """What the encoder sees for a chunk: its headings, then its text (as docling contextualizes).

    ``rebuild`` re-embeds stored chunks with the same function, so a rebuilt
    vector equals a freshly ingested one.
    """
    return "\n".join([*headings, content])


def decode_text(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252")


class Converter:
    """A docling converter and chunker, built once per worker."""

    def __init__(self, *, tokenizer_dir: str, chunk_size: int, pdf_threads: int = 1) -> None:
        from docling.chunking import HybridChunker
        from docling.datamodel.base_models import InputFormat
        from docling.datamodel.pipeline_options import NativePdfPipelineOptions
        from docling.document_converter import DocumentConverter, NativePdfFormatOption

        from haiku.ingester.pipeline.tokenizer import LocalTokenizer

        self._formats = {"md": InputFormat.MD, "html": InputFormat.HTML, "docx": InputFormat.DOCX, "pdf": InputFormat.PDF}
        self._converter = DocumentConverter(
            allowed_formats=list(self._formats.values()),
            format_options={
                InputFormat.PDF: NativePdfFormatOption(
                    pipeline_options=NativePdfPipelineOptions(parser_threads=pdf_threads)
                )
            },
        )
        tokenizer = LocalTokenizer.from_model_dir(tokenizer_dir, chunk_size)
        self._chunker = HybridChunker(tokenizer=tokenizer)
        self._text_chunker = HybridChunker(tokenizer=tokenizer, serializer_provider=_plain_text_serializers())

    def convert(self, *, name: str, fmt: str, data: bytes) -> ConvertedDocument:
        from haiku.ingester.errors import ConversionError

        if fmt == "text":
            text = decode_text(data)
            document = self._text_document(name, text)
            return self._finish(document, name, content=text, chunker=self._text_chunker, title=title_line(text))
        if fmt not in CONVERTIBLE:
            raise ConversionError(f"{name}: no converter for format {fmt!r}")
        if fmt in ("md", "html"):
            data = decode_text(data).encode("utf-8")  # docling reads text formats as UTF-8
            document = self._convert_text_format(name, fmt, data)
            return self._finish(document, name, content=document.export_to_markdown())
        from docling.datamodel.base_models import ConversionStatus, DocumentStream

        stream = DocumentStream(name=Path(name).name, stream=io.BytesIO(data))
        try:
            result = self._converter.convert(stream, raises_on_error=False)
        except Exception as exc:  # docling raises its own types and anything its parsers raise
            raise ConversionError(f"{name}: docling could not convert it: {type(exc).__name__}: {exc}") from None
        if result.status not in (ConversionStatus.SUCCESS, ConversionStatus.PARTIAL_SUCCESS):
            detail = "; ".join(e.error_message for e in result.errors) or str(result.status.value)
            raise ConversionError(f"{name}: docling could not convert it: {detail}")
        document = result.document
        content = document.export_to_markdown()
        title = (pdf_title(data) or title_line(content)) if fmt == "pdf" else None
        return self._finish(document, name, content=content, title=title)

    def _convert_text_format(self, name: str, fmt: str, data: bytes) -> Any:
        """Markdown and HTML straight through their docling backends, in the format the name says.

        ``DocumentConverter`` sniffs a stream's first bytes before its name, so a
        markdown file opening with "BM…" (a BMP signature) or "ID3" was refused
        as an image or audio file.
        """
        from docling.backend.html_backend import HTMLDocumentBackend
        from docling.backend.md_backend import MarkdownDocumentBackend
        from docling.datamodel.document import InputDocument

        from haiku.ingester.errors import ConversionError

        backend_cls: Any = MarkdownDocumentBackend if fmt == "md" else HTMLDocumentBackend
        filename = Path(name).name
        try:
            source = InputDocument(
                path_or_stream=io.BytesIO(data), format=self._formats[fmt], backend=backend_cls, filename=filename
            )
            backend = backend_cls(source, io.BytesIO(data))
            if not source.valid or not backend.is_valid():
                raise ConversionError(f"{name}: docling could not read it as {fmt}")
            return backend.convert()
        except ConversionError:
            raise
        except Exception as exc:  # whatever the parser raises on this input
            raise ConversionError(f"{name}: docling could not convert it: {type(exc).__name__}: {exc}") from None

    @staticmethod
    def _text_document(name: str, text: str) -> Any:
        from docling_core.types.doc import DocItemLabel, DoclingDocument

        document = DoclingDocument(name=Path(name).stem or "text")
        for paragraph in text.replace("\r\n", "\n").split("\n\n"):
            if paragraph.strip():
                document.add_text(label=DocItemLabel.TEXT, text=paragraph.strip())
        return document

    def _finish(
        self, document: Any, name: str, *, content: str, chunker: Any = None, title: str | None = None
    ) -> ConvertedDocument:
        """``title``: the format's own title when the document has no heading."""
        chunks: list[ConvertedChunk] = []
        for chunk in (chunker or self._chunker).chunk(document):
            pages = sorted({prov.page_no for item in chunk.meta.doc_items for prov in (item.prov or [])})
            headings = list(chunk.meta.headings or [])
            chunks.append(
                ConvertedChunk(
                    content=chunk.text,
                    embed_text=embed_text(headings, chunk.text),
                    headings=headings,
                    page_numbers=pages,
                )
            )
        title = first_heading(document) or title or Path(name).name
        return ConvertedDocument(title=title, content=content, chunks=chunks)


TITLE_MAX_CHARS = 100
_NOT_A_TITLE = re.compile(r"(?i)^(untitled|title|document\d*)$|\.(docx?|pdf|odt|rtf|tex|dvi|txt|pptx?)$|^microsoft ")


def title_line(text: str) -> str | None:
    """The first paragraph as a title, when it is one short line that does not end a sentence.

    ``Kestrel notes`` above a blank line is a title; ``Kestrels hover.`` is a
    sentence, and a paragraph of several lines is body text.
    """
    for paragraph in text.replace("\r\n", "\n").split("\n\n"):
        lines = paragraph.strip().splitlines()
        if not lines:
            continue
        first = lines[0].strip().lstrip("#").strip()
        if len(lines) == 1 and 0 < len(first) <= TITLE_MAX_CHARS and not first.endswith((".", ",", ";", ":")):
            return first
        return None
    return None


def pdf_title(data: bytes) -> str | None:
    """The title a PDF's metadata records, unless it is a placeholder or a file name."""
    try:
        import pypdfium2

        pdf = pypdfium2.PdfDocument(data)
        try:
            title = (pdf.get_metadata_dict().get("Title") or "").strip()
        finally:
            pdf.close()
    except Exception:  # a PDF docling read but pdfium cannot: no title from it
        return None
    if not title or len(title) > 2 * TITLE_MAX_CHARS or _NOT_A_TITLE.search(title):
        return None
    return title


def _plain_text_serializers() -> Any:
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


def first_heading(document: Any) -> str | None:
    """The document's first title or section heading, in reading order."""
    from docling_core.types.doc import DocItemLabel

    for item, _level in document.iterate_items():
        label = getattr(item, "label", None)
        if label in (DocItemLabel.TITLE, DocItemLabel.SECTION_HEADER):
            text = (getattr(item, "text", "") or "").strip()
            if text:
                return text
    return None
