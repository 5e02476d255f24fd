"""What a file's bytes are before conversion (docs/ingester.md, "Formats"): a compressed
file inflated under a size cap, and whether bytes whose name does not promise text are text.

A ``.gz``, ``.bz2`` or ``.xz`` file is inflated a block at a time and refused
as soon as it holds more than the cap (a source's ``max_file_size``), so a
compression bomb costs at most the cap in memory, never what it expands to.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import zlib
from io import BytesIO
from typing import BinaryIO


class InflatedTooLargeError(ValueError):
    """A compressed file holding more than the size cap."""


class NotCompressedError(ValueError):
    """Bytes that are not the compressed stream their name says."""


_READERS = {
    "gzip": lambda raw: gzip.GzipFile(fileobj=raw),
    "bzip2": lambda raw: bz2.BZ2File(raw),
    "xz": lambda raw: lzma.LZMAFile(raw),
}
_BLOCK = 1 << 20


def inflate(data: bytes, compression: str, *, limit: int) -> bytes:
    """The bytes a ``compression`` stream holds, at most ``limit`` of them; raises
    ``InflatedTooLargeError`` past the limit, ``NotCompressedError`` for a broken stream."""
    parts: list[bytes] = []
    size = 0
    try:
        reader: BinaryIO = _READERS[compression](BytesIO(data))
        with reader:
            while block := reader.read(min(_BLOCK, limit + 1 - size)):
                parts.append(block)
                size += len(block)
                if size > limit:
                    raise InflatedTooLargeError(f"it inflates to more than {limit} bytes")
    except (OSError, EOFError, zlib.error, lzma.LZMAError) as exc:
        raise NotCompressedError(f"not a readable {compression} stream ({exc})") from None
    return b"".join(parts)


# Bytes other than these below 0x20 (tab, line feed, carriage return, form feed, escape) mark a binary.
_TEXT_CONTROLS = {0x09, 0x0A, 0x0C, 0x0D, 0x1B}
_SAMPLE = 8192


def looks_like_text(data: bytes) -> bool:
    """Whether bytes no extension vouches for are text: no NUL, UTF-8 (or cp1252) in the first
    8 KiB, and under 1 % control characters there (an executable, an image, a database are not)."""
    head = data[:_SAMPLE]
    if b"\x00" in data[:65536]:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not merely a character cut at the sample's end
            try:
                head.decode("cp1252")
            except UnicodeDecodeError:
                return False
    controls = sum(1 for byte in head if byte < 0x20 and byte not in _TEXT_CONTROLS)
    return controls * 100 < max(len(head), 1)
