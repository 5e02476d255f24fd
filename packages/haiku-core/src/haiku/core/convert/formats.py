"""The format table as the converter reads it (docs/ingester.md, "Formats").

The table itself is ``haiku.core.formats`` (below the configuration, which
takes its default ``include_patterns`` from it), re-exported here; this module
adds what depends on the machine or the bytes. ``haiku-ingester formats``
prints the table. Plain data, importable without docling.

One claim rule where docling and the text reader could both take a file:
``.xml`` goes to docling's JATS or USPTO backend when its doctype says it is one
(``xml_kind``), otherwise it is read as text; ``.txt``, ``.json`` and ``.yaml``
are always text.
"""

from __future__ import annotations

import re
import shutil

from haiku.core.errors import Hint
from haiku.core.formats import (
    CONVERTERS,
    FORMATS,
    TEXT_CONVERTERS,
    FileFormat,
    format_of,
    include_patterns,
    legacy_target,
)

# What a caller given an unsupported file can do: read the table (a command line prints it).
FORMATS_HINT = Hint("list-formats", "format_rows() of haiku.core.convert.formats lists the supported ones")

__all__ = [
    "CONVERTERS",
    "FORMATS",
    "FORMATS_HINT",
    "TEXT_CONVERTERS",
    "FileFormat",
    "format_of",
    "format_rows",
    "include_patterns",
    "legacy_target",
    "render_formats",
    "unavailable_reason",
    "xml_kind",
]


def unavailable_reason(extension: str) -> str | None:
    """Why a known format cannot be converted on this machine; None when it can."""
    spec = FORMATS.get(extension.lower())
    if spec is not None and spec.converter == "legacy" and shutil.which("soffice") is None:
        return (
            f"{extension} files are converted through LibreOffice, and `soffice` is not on PATH; "
            "install LibreOffice to ingest them"
        )
    return None


_USPTO_DOCTYPES = ("us-patent-application-v4", "us-patent-grant-v4", "us-grant-025", "patent-application-publication")


def xml_kind(head: bytes) -> str | None:
    """``jats`` or ``uspto`` when an XML file's doctype names one (as docling detects them), else None."""
    text = head[:8192].decode("utf-8", errors="replace")
    doctype = re.search(r"<!DOCTYPE [^>]+>", text)
    if doctype is None:
        return None
    if any(marker in doctype.group().lower() for marker in _USPTO_DOCTYPES):
        return "uspto"
    if "JATS-journalpublishing" in doctype.group() or "JATS-archive" in doctype.group():
        return "jats"
    return None


def format_rows() -> list[dict[str, str | None]]:
    """The table as rows (extension, converter, what it does, content type, language, why unavailable)."""
    return [
        {
            "extension": ext,
            "converter": spec.converter,
            "via": CONVERTERS[spec.converter],
            "content_type": spec.content_type,
            "language": spec.language,
            "unavailable": unavailable_reason(ext),
        }
        for ext, spec in sorted(FORMATS.items())
    ]


def render_formats() -> str:
    rows = format_rows()
    lines = [
        f"{len(rows)} extensions (include_patterns defaults to all of them); also names without an extension "
        "(README, README.Debian, copyright, Makefile) when their bytes are text, and .gz/.bz2/.xz files by "
        "the name inside (changelog.Debian.gz):"
    ]
    for row in rows:
        what = f"{row['converter']} ({row['via']})"
        language = f" [{row['language']}]" if row["language"] else ""
        note = f"  -- unavailable: {row['unavailable']}" if row["unavailable"] else ""
        lines.append(f"  {row['extension']:<12} {what:<72} {row['content_type']}{language}{note}")
    return "\n".join(lines)
