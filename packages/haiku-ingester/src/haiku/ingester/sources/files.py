"""Reading a file for the pipeline: what it is, whether it may be read, its bytes and hash."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePath

from haiku.core.convert.file_bytes import InflatedTooLargeError, NotCompressedError, inflate, looks_like_text
from haiku.core.convert.formats import FileFormat, format_of, unavailable_reason
from haiku.ingester.errors import (
    BinaryContentError,
    ContentMismatchError,
    EmptyFileError,
    FileTooLargeError,
    MissingFileError,
    NotARegularFileError,
    SymlinkLoopError,
    UnknownFileTypeError,
    UnsupportedFileError,
)


def revision_of(st: os.stat_result) -> str:
    """A file's revision: its modification time and size."""
    return f"{st.st_mtime_ns}-{st.st_size}"


@dataclass(frozen=True)
class FileFacts:
    path: Path
    format: str
    content_type: str
    size: int
    revision: str


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def checked_format(path: PurePath | str, name: str, suffix: str) -> FileFormat:
    """The format a file converts as, for folders and object storage alike; a permanent error
    when no converter takes ``name`` (``suffix`` as the message shows it) or this machine cannot."""
    spec = format_of(name)
    if spec is None:
        raise UnknownFileTypeError(
            f"{path}: unsupported file type {suffix or '(none)'}; `haiku-ingester formats` lists the supported ones"
        )
    reason = unavailable_reason(suffix.lower())
    if reason is not None:
        raise UnsupportedFileError(f"{path}: {reason}")
    return spec


def inspect_file(path: Path, *, max_file_size: int) -> FileFacts:
    """Stat a file and decide whether the pipeline can take it; permanent errors say why not."""
    spec = checked_format(path, path.name, path.suffix.lower())
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise MissingFileError(f"{path}: the symlink points at {os.readlink(path)}, which does not exist") from None
        raise MissingFileError(f"{path}: the file no longer exists") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SymlinkLoopError(f"{path}: symlink loop (too many levels of symbolic links)") from None
        raise
    if not stat.S_ISREG(st.st_mode):
        raise NotARegularFileError(f"{path}: {_kind(st.st_mode)}, not a regular file; only files are ingested")
    if st.st_size > max_file_size:
        raise FileTooLargeError(
            f"{path}: {st.st_size} bytes is over max_file_size ({max_file_size} bytes) of its source"
        )
    if st.st_size == 0:
        raise EmptyFileError(f"{path}: the file is empty (0 bytes)")
    return FileFacts(
        path=path, format=spec.converter, content_type=spec.content_type, size=st.st_size, revision=revision_of(st)
    )


def read_bytes(facts: FileFacts, *, max_file_size: int) -> bytes:
    """Read at most max_file_size + 1 bytes, so a file growing meanwhile is still caught."""
    with open(facts.path, "rb") as handle:
        data = handle.read(max_file_size + 1)
    return check_bytes(facts, data, max_file_size=max_file_size)


def check_bytes(facts: FileFacts, data: bytes, *, max_file_size: int) -> bytes:
    """The bytes read for ``facts`` (at most max_file_size + 1 of them), if the pipeline can take them."""
    if len(data) > max_file_size:
        raise FileTooLargeError(f"{facts.path}: grew over max_file_size ({max_file_size} bytes) while being read")
    if not data:
        raise EmptyFileError(f"{facts.path}: the file is empty (0 bytes)")
    spec = format_of(facts.path.name)
    if spec is not None and spec.compression:
        data = _inflated(facts, data, spec.compression, max_file_size=max_file_size)
    if spec is not None and spec.sniffed:
        _check_sniffed_text(facts.path, data)
    elif spec is not None and spec.text:
        check_text(facts.path, data)
    else:
        refuse_key_material(facts, data)
        check_signature(facts, data)
    return data


def _inflated(facts: FileFacts, data: bytes, compression: str, *, max_file_size: int) -> bytes:
    """A compressed file's content, capped like any file's size (a compression bomb is skipped as too large)."""
    try:
        data = inflate(data, compression, limit=max_file_size)
    except InflatedTooLargeError:
        raise FileTooLargeError(
            f"{facts.path}: inflates to more than max_file_size ({max_file_size} bytes) of its source"
        ) from None
    except NotCompressedError as exc:
        raise ContentMismatchError(f"{facts.path}: the bytes are {exc}; rename the file to its real type") from None
    if not data:
        raise EmptyFileError(f"{facts.path}: the compressed file holds nothing (0 bytes)")
    return data


def _check_sniffed_text(path: Path, data: bytes) -> None:
    """A file whose name does not say it is text (README, a name without an extension) is taken only
    when its bytes are text; a binary one is skipped, and a PEM key is never read."""
    if not looks_like_text(data):
        raise BinaryContentError(f"{path}: binary content, and the name has no extension that says what it is")
    if data.lstrip()[: len(_PEM)] == _PEM:
        raise UnknownFileTypeError(f"{path}: a PEM key or certificate; key files are skipped so no secret is indexed")


# `.key` is Keynote's extension and also the usual name of a private key or certificate in PEM form.
_PEM = b"-----BEGIN "


def refuse_key_material(facts: FileFacts, data: bytes) -> None:
    """A PEM key or certificate named ``.key`` is skipped, never read: a secret has no place in an index."""
    if facts.path.suffix.lower() == ".key" and data.lstrip()[: len(_PEM)] == _PEM:
        label = data.lstrip()[len(_PEM) :].split(b"-----", 1)[0].decode("ascii", "replace")[:40]
        raise UnsupportedFileError(
            f"{facts.path}: a PEM {label.lower() or 'key'} file, not a Keynote presentation; "
            "key files are skipped so that no secret reaches the index"
        )


# What the first bytes of a binary format must hold. A zip named .pdf would otherwise
# reach the PDF backend, an HTML page named .png the image reader.
_ZIP = ((b"PK\x03\x04",), "the file is a zip archive")
_OLE = ((b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1",), "the file is an OLE compound document")
_SIGNATURES: dict[str, tuple[tuple[bytes, ...], str]] = {
    "pdf": ((b"%PDF-",), "a PDF starts with %PDF- within its first 1024 bytes"),
    **{fmt: _ZIP for fmt in ("docx", "pptx", "xlsx", "odt", "ods", "odp", "epub", "pages", "numbers", "key")},
    "image": (
        (b"\x89PNG", b"\xff\xd8\xff", b"II*\x00", b"MM\x00*", b"BM", b"RIFF", b"GIF8"),
        "an image starts with its format's signature",
    ),
}
_BY_EXTENSION = {".rtf": ((b"{\\rtf",), "an RTF file starts with {\\rtf"), ".msg": _OLE}


def _signature(facts: FileFacts) -> tuple[tuple[bytes, ...], str] | None:
    suffix = facts.path.suffix.lower()
    if suffix in _BY_EXTENSION:
        return _BY_EXTENSION[suffix]
    return _OLE if facts.format == "legacy" else _SIGNATURES.get(facts.format)


def check_signature(facts: FileFacts, data: bytes) -> None:
    """The bytes must be of the format the extension names (no zip recorded as a PDF)."""
    signature = _signature(facts)
    if signature is None:
        return
    magics, rule = signature
    if facts.format == "pdf":
        found = any(magic in data[:1024] for magic in magics)
    else:
        found = data.startswith(magics)
    if not found:
        raise ContentMismatchError(
            f"{facts.path}: the bytes are not {facts.path.suffix.lower()} content ({rule}); "
            "rename the file to its real type"
        )


def check_text(path: Path, data: bytes) -> None:
    """A text format must hold text: no NUL bytes, and UTF-8 (or at least cp1252)."""
    if b"\x00" in data[:65536]:
        raise BinaryContentError(f"{path}: binary content (NUL bytes) in a {path.suffix} file, which should be text")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        try:
            data.decode("cp1252")
        except UnicodeDecodeError:
            raise BinaryContentError(f"{path}: the bytes are neither UTF-8 nor cp1252 text") from None


def content_hash(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()
