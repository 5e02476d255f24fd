"""Converting a file on disk as the ingester would, on any client (docs/client.md, "Conversion").

``FileConverter`` applies a configuration's processing settings
(``processing.chunk_size``, ``processing.ocr``,
``processing.pdf_layout``) and the format table; it
touches no database and writes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from haiku.core.config import AppConfig
from haiku.core.convert.document import ConvertedChunk, ReadDocument
from haiku.core.convert.file_bytes import InflatedTooLargeError, NotCompressedError, inflate, looks_like_text
from haiku.core.convert.formats import FORMATS_HINT, FileFormat, format_of, unavailable_reason
from haiku.core.errors import ConversionError


def tokenizer_dir(config: AppConfig) -> str:
    """The configured local model's tokenizer, else all-MiniLM-L6-v2's: chunk sizes in encoder tokens."""
    from haiku.core.embedders import local_model_path

    model = config.embeddings.model
    if model.provider == "sentence-transformers":
        candidate = Path(local_model_path(model.name))
        if (candidate / "tokenizer.json").is_file():
            return str(candidate)
    return local_model_path()


class FileConverter:
    """The converter under one configuration, built on first use."""

    def __init__(self, config: AppConfig) -> None:
        self._config = config
        self._converter: Any = None

    def _built(self) -> Any:
        if self._converter is None:
            from haiku.core.convert.converter import Converter
            from haiku.core.convert.structure import StructureOptions

            processing = self._config.processing
            self._converter = Converter(
                tokenizer_dir=tokenizer_dir(self._config), chunk_size=processing.chunk_size, ocr=processing.ocr,
                pdf_layout=processing.pdf_layout, structure=StructureOptions.from_processing(processing),
            )  # fmt: skip
        return self._converter

    def convert(self, path: str | Path) -> ReadDocument:
        """The file read into a document (markdown in ``.content``), not yet chunked."""
        path = Path(path)
        spec = format_of(path.name)
        if spec is None:
            raise ConversionError.hinted(f"{path}: unsupported file type {path.suffix or '(none)'}", FORMATS_HINT)
        reason = unavailable_reason(path.suffix)
        if reason is not None:
            raise ConversionError(f"{path}: {reason}")
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise ConversionError(f"{path}: cannot read it: {exc.strerror or exc}") from None
        data = _checked_bytes(path, spec, data)
        return self._built().read(name=str(path), fmt=spec.converter, data=data)

    def chunk(self, document: ReadDocument) -> list[ConvertedChunk]:
        return self._built().chunk(document)

    def generate_title(self, document: ReadDocument) -> str:
        return self._built().title(document)

    def count_tokens(self, text: str) -> int:
        return self._built().count_tokens(text)


# What a compressed file may inflate to here, where no source's max_file_size applies: its default.
INFLATE_LIMIT = 100 * 1024 * 1024


def _checked_bytes(path: Path, spec: FileFormat, data: bytes) -> bytes:
    """A compressed file inflated; bytes a name does not vouch for refused unless text."""
    if spec.compression:
        try:
            data = inflate(data, spec.compression, limit=INFLATE_LIMIT)
        except (InflatedTooLargeError, NotCompressedError) as exc:
            raise ConversionError(f"{path}: {exc}") from None
    if spec.sniffed and not looks_like_text(data):
        raise ConversionError(f"{path}: binary content, and the name has no extension that says what it is")
    return data


def conversion_report(files: FileConverter, path: str | Path, *, chunks: bool) -> dict[str, Any]:
    """What ``convert FILE`` prints: the title, the markdown, and with ``chunks`` each chunk."""
    document = files.convert(path)
    report: dict[str, Any] = {
        "file": str(path),
        "title": files.generate_title(document),
        "language": document.language,
        "content": document.content,
    }
    if chunks:
        report["chunks"] = [
            {
                "headings": c.headings,
                "page_numbers": c.page_numbers,
                "tokens": files.count_tokens(c.embed_text),
                "content": c.content,
            }
            for c in files.chunk(document)
        ]
    return report


def render_conversion(report: dict[str, Any]) -> str:
    lines = [f"title: {report['title']}"]
    if report.get("language"):
        lines.append(f"language: {report['language']}")
    lines += ["", report["content"]]
    for i, chunk in enumerate(report.get("chunks") or [], 1):
        where = f" pages {','.join(map(str, chunk['page_numbers']))}" if chunk["page_numbers"] else ""
        heads = " > ".join(chunk["headings"])
        lines += ["", f"--- chunk {i} ({chunk['tokens']} tokens{where}){' ' + heads if heads else ''}", chunk["content"]]
    return "\n".join(lines)
