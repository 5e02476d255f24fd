"""Files people have beyond the table's extensions (docs/ingester.md, "Formats"): names without an
extension read as text by their content, compressed files by their inner name, under the size cap.
Real files from Debian's /usr/share/doc (licences in debian_docs/LICENSES.md) and generated ones."""

from __future__ import annotations

import bz2
import gzip
import lzma
from pathlib import Path

import pytest

from haiku.core.convert.file_bytes import InflatedTooLargeError, NotCompressedError, inflate, looks_like_text
from haiku.core.convert.formats import format_of, include_patterns

DEBIAN = Path(__file__).parent / "debian_docs"


@pytest.mark.parametrize(
    ("name", "converter", "compression"),
    [
        ("README", "text", None), ("README.Debian", "text", None), ("copyright", "text", None),
        ("Makefile", "code", None), ("changelog.Debian.gz", "text", "gzip"), ("manual.html.gz", "html", "gzip"),
        ("notes.txt.bz2", "text", "bzip2"), ("dump.sql.xz", "code", "xz"), ("docs/v1.2/NEWS", "text", None),
    ],
)  # fmt: skip
def test_names_without_a_table_extension_and_compressed_files_have_a_format(name, converter, compression):
    spec = format_of(name)
    assert spec is not None and (spec.converter, spec.compression) == (converter, compression)


@pytest.mark.parametrize("name", ["site.tar.gz", ".env", ".netrc", "photo.xyz", "backup.gz.bak"])
def test_archives_hidden_files_and_unknown_extensions_have_none(name):
    assert format_of(name) is None


def test_the_default_patterns_take_compressed_files_and_names_without_an_extension():
    patterns = include_patterns()
    assert {"*.gz", "*.bz2", "*.xz", "*"} <= set(patterns)


def test_a_real_debian_changelog_gz_converts_as_its_text(converter):
    path = DEBIAN / "bc" / "changelog.Debian.gz"
    spec = format_of(path.name)
    data = inflate(path.read_bytes(), spec.compression, limit=1 << 20)
    document = converter.convert(name=str(path), fmt=spec.converter, data=data)
    assert document.title.startswith("bc (1.07.1-3) unstable")
    assert "drop unneeded phony target in rules" in " ".join(c.content for c in document.chunks)


@pytest.mark.parametrize("name", ["bc/copyright", "procps/README.Debian"])
def test_real_debian_files_without_an_extension_convert_as_text(converter, name):
    path = DEBIAN / name
    spec = format_of(path.name)
    assert looks_like_text(path.read_bytes())
    document = converter.convert(name=str(path), fmt=spec.converter, data=path.read_bytes())
    text = " ".join(c.content for c in document.chunks)
    assert ("Upstream-Name: bc" in text) if name.startswith("bc") else ("ipv6 sysctl keys" in text)


def test_a_gzipped_html_manual_converts_as_html(converter):
    page = b"<html><head><title>Field manual</title></head><body><h1>Field manual</h1><p>Ruffs lek.</p></body></html>"
    spec = format_of("manual.html.gz")
    document = converter.convert(name="manual.html.gz", fmt=spec.converter, data=inflate(gzip.compress(page), "gzip", limit=10_000))
    assert document.title == "Field manual" and "Ruffs lek." in document.chunks[-1].content


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress])
def test_a_compression_bomb_is_refused_at_the_cap_without_inflating_it_all(compress):
    bomb = compress(b"\0" * (64 << 20))  # 64 MiB of zeros in a few kB
    assert len(bomb) < 200_000
    kind = {gzip.compress: "gzip", bz2.compress: "bzip2", lzma.compress: "xz"}[compress]
    with pytest.raises(InflatedTooLargeError):
        inflate(bomb, kind, limit=1 << 20)


def test_a_broken_compressed_stream_is_named_as_such():
    with pytest.raises(NotCompressedError, match="gzip"):
        inflate(b"\x1f\x8b\x08\x00gzip", "gzip", limit=1000)


def test_binaries_are_not_text_and_real_text_is():
    elf = b"\x7fELF\x02\x01\x01\x00" + bytes(range(1, 256)) * 8
    assert not looks_like_text(elf) and not looks_like_text(b"\x7fELF\x02\x01\x01" + bytes(range(1, 32)) * 50)
    assert looks_like_text("Ondřej Nový — naïve\n".encode()) and looks_like_text("café\n".encode("cp1252"))
