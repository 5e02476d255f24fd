"""docling's backends, chosen by the format table and never by sniffing (docs/ingester.md, "Formats").

``DocumentConverter`` guesses a stream's format from its first bytes before its
name, so a markdown file opening with "BM…" (a BMP signature) was refused as an
image and a zip named .pdf converted as Word. Here each converter name of the
table maps to one docling format and its option (backend and pipeline); the
input is read by that backend or refused.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from haiku.core.errors import ConversionError


def _options(pdf_threads: int, picture_images: bool = True) -> dict[str, tuple[Any, Any]]:
    """converter name -> (docling InputFormat, FormatOption).

    PDF page images are not docling's to render (``haiku.core.convert.pages``
    renders them one page at a time); picture images are kept when pictures
    are stored (``processing.pictures``).
    """
    from docling.backend.webvtt_backend import WebVTTDocumentBackend
    from docling.datamodel.base_models import InputFormat as F
    from docling.datamodel.pipeline_options import NativePdfPipelineOptions
    from docling.document_converter import (
        AsciiDocFormatOption,
        CsvFormatOption,
        EmailFormatOption,
        EpubFormatOption,
        ExcelFormatOption,
        FormatOption,
        HTMLFormatOption,
        IWorkKeynoteFormatOption,
        IWorkNumbersFormatOption,
        IWorkPagesFormatOption,
        LatexFormatOption,
        MarkdownFormatOption,
        NativePdfFormatOption,
        OdpFormatOption,
        OdsFormatOption,
        OdtFormatOption,
        PatentUsptoFormatOption,
        PowerpointFormatOption,
        WordFormatOption,
        XMLJatsFormatOption,
    )
    from docling.pipeline.simple_pipeline import SimplePipeline

    return {
        "md": (F.MD, MarkdownFormatOption()),
        "html": (F.HTML, HTMLFormatOption()),
        "docx": (F.DOCX, WordFormatOption()),
        "pdf": (
            F.PDF,
            NativePdfFormatOption(
                pipeline_options=NativePdfPipelineOptions(
                    parser_threads=pdf_threads, generate_page_images=False, generate_picture_images=picture_images
                )
            ),
        ),
        "pptx": (F.PPTX, PowerpointFormatOption()),
        "xlsx": (F.XLSX, ExcelFormatOption()),
        "csv": (F.CSV, CsvFormatOption()),
        "asciidoc": (F.ASCIIDOC, AsciiDocFormatOption()),
        "latex": (F.LATEX, LatexFormatOption()),
        "vtt": (F.VTT, FormatOption(pipeline_cls=SimplePipeline, backend=WebVTTDocumentBackend)),
        "xml_jats": (F.XML_JATS, XMLJatsFormatOption()),
        "xml_uspto": (F.XML_USPTO, PatentUsptoFormatOption()),
        "odt": (F.ODT, OdtFormatOption()),
        "ods": (F.ODS, OdsFormatOption()),
        "odp": (F.ODP, OdpFormatOption()),
        "epub": (F.EPUB, EpubFormatOption()),
        "email": (F.EMAIL, EmailFormatOption()),
        "pages": (F.IWORK_PAGES, IWorkPagesFormatOption()),
        "numbers": (F.IWORK_NUMBERS, IWorkNumbersFormatOption()),
        "key": (F.IWORK_KEYNOTE, IWorkKeynoteFormatOption()),
    }


class DoclingBackends:
    """One docling pipeline per format, built on first use and kept."""

    def __init__(self, *, pdf_threads: int = 1, picture_images: bool = True) -> None:
        self._options = _options(pdf_threads, picture_images)
        self._pipelines: dict[str, Any] = {}

    def convert(self, name: str, fmt: str, data: bytes) -> Any:
        """The docling document of ``data``, read as ``fmt``; ``ConversionError`` says why not."""
        from docling.datamodel.base_models import ConversionStatus
        from docling.datamodel.document import InputDocument

        if fmt not in self._options:
            raise ConversionError(f"{name}: no converter for format {fmt!r}")
        input_format, option = self._options[fmt]
        try:
            source = InputDocument(
                path_or_stream=io.BytesIO(data),
                format=input_format,
                backend=option.backend,
                backend_options=option.backend_options,
                filename=Path(name).name,
            )
            if not source.valid:
                raise ConversionError(f"{name}: docling could not convert it: it is not a readable {fmt} file")
            pipeline = self._pipelines.get(fmt)
            if pipeline is None:
                pipeline = self._pipelines[fmt] = option.pipeline_cls(pipeline_options=option.pipeline_options)
            result = pipeline.execute(source, raises_on_error=False)
        except ConversionError:
            raise
        except Exception as exc:  # docling raises its own types and anything its parsers raise
            raise ConversionError(f"{name}: docling could not convert it: {type(exc).__name__}: {exc}") from None
        if result.status not in (ConversionStatus.SUCCESS, ConversionStatus.PARTIAL_SUCCESS):
            detail = "; ".join(e.error_message for e in result.errors) or str(result.status.value)
            raise ConversionError(f"{name}: docling could not convert it: {detail}")
        return result.document
