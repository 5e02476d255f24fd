"""Convert a file's bytes to a document and its chunks (docs/ingester.md, "Formats").

docling-slim converts markdown, html and docx with its declarative backends and
PDFs with the native, model-free text pipeline (no layout or OCR model, nothing
downloaded). Plain text is taken as is. Chunks come from docling's HybridChunker
with the embedding model's tokenizer, so ``processing.chunk_size`` counts the
tokens the encoder will see, headings included.

docling is imported when a ``Converter`` is built, never when this module is:
without the ``convert`` extra that raises ``ConverterUnavailableError``.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from haiku.core.convert.document import ConvertedChunk, ConvertedDocument, decode_text, embed_text
from haiku.core.convert.serializers import chunking_serializers, export_markdown, inline_keeping_chunker
from haiku.core.convert.titles import choose_title, pdf_title, title_line
from haiku.core.errors import ConversionError, ConverterUnavailableError

CONVERTIBLE = {"md", "html", "docx", "pdf"}


def _require_docling() -> None:
    try:
        import docling  # noqa: F401
        import docling_core  # noqa: F401
    except ImportError as exc:
        raise ConverterUnavailableError(exc.name or "docling") from None


class Converter:
    """A docling converter and chunker, built once per process (a conversion worker, a client)."""

    def __init__(self, *, tokenizer_dir: str, chunk_size: int, pdf_threads: int = 1) -> None:
        _require_docling()
        from docling.datamodel.base_models import InputFormat
        from docling.datamodel.pipeline_options import NativePdfPipelineOptions
        from docling.document_converter import DocumentConverter, NativePdfFormatOption

        from haiku.core.convert.tokenizer import LocalTokenizer

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
        self._chunker = inline_keeping_chunker(tokenizer=tokenizer, serializer_provider=chunking_serializers())
        self._text_chunker = inline_keeping_chunker(
            tokenizer=tokenizer, serializer_provider=chunking_serializers(plain_text=True)
        )

    def convert(self, *, name: str, fmt: str, data: bytes) -> ConvertedDocument:
        if fmt == "text":
            text = decode_text(data)
            document = self._text_document(name, text)
            return self._finish(document, name, content=text, chunker=self._text_chunker, title=title_line(text))
        if fmt not in CONVERTIBLE:
            raise ConversionError(f"{name}: no converter for format {fmt!r}")
        if fmt in ("md", "html"):
            data = decode_text(data).encode("utf-8")  # docling reads text formats as UTF-8
            document = self._convert_text_format(name, fmt, data)
            return self._finish(document, name, content=export_markdown(document))
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
        content = export_markdown(document)
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
        return ConvertedDocument(title=choose_title(document, name, title), content=content, chunks=chunks)
