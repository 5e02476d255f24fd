"""Every format of the table converts offline (docs/ingester.md, "Formats"), each from a
small file made in the test; code keeps its language; chunk text is clean."""

from __future__ import annotations

import pytest
from format_samples import SAMPLES, text_image

from haiku.core.convert.formats import FORMATS, format_of

pytestmark = pytest.mark.slow


def _convert(converter, name: str, data: bytes):
    spec = format_of(name)
    assert spec is not None, name
    return converter.convert(name=name, fmt=spec.converter, data=data)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_each_format_converts_and_its_chunks_hold_the_sentence(converter, name):
    make, sentence = SAMPLES[name]
    document = _convert(converter, name, make(sentence))
    assert sentence in " ".join(c.embed_text for c in document.chunks), [c.content for c in document.chunks]


def test_an_outlook_message_is_read_from_its_ole_file_with_its_sender(converter):
    from format_samples import outlook_msg

    data = outlook_msg("Ruffs display on the lek")
    assert data.startswith(b"\xd0\xcf\x11\xe0")  # an OLE compound file, as Outlook writes
    document = _convert(converter, "mail.msg", data)
    assert document.title == "Field notes" and "From: Ann <ann@example.org>" in document.chunks[0].content


@pytest.mark.parametrize("extension", [".pages", ".numbers", ".key"])
def test_a_zip_that_is_no_iwork_package_is_refused_by_the_iwork_backend(converter, extension):
    import io
    import zipfile

    from haiku.core.errors import ConversionError

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("word/document.xml", "<w:document/>")
    with pytest.raises(ConversionError, match=f"not a readable {extension[1:]} file"):
        _convert(converter, f"notes{extension}", buffer.getvalue())


def test_the_table_holds_more_than_87_extensions_and_60_code_or_text_ones():
    code_or_text = [ext for ext, spec in FORMATS.items() if spec.converter in ("code", "text")]
    assert len(FORMATS) > 87 and len(code_or_text) >= 60


def test_code_keeps_its_tabs_in_a_fenced_block_of_its_language(converter):
    document = _convert(converter, "birds.py", b'def note():\n\treturn "merlin"\n\n\nclass Bird:\n    pass\n')
    assert document.language == "python"
    text = "\n".join(c.content for c in document.chunks)
    assert '```python\ndef note():\n\treturn "merlin"\n```' in text and "```python\nclass Bird:" in text


def test_xml_is_read_as_text_unless_docling_detects_jats():
    from format_samples import jats

    from haiku.core.convert.formats import xml_kind

    assert xml_kind(jats("x")) == "jats"
    assert xml_kind(b"<?xml version='1.0'?><notes/>") is None


def test_json_is_text_even_when_it_looks_like_a_docling_document(converter):
    document = _convert(converter, "doc.json", b'{"schema_name": "DoclingDocument", "name": "wren"}')
    assert document.language == "json" and '"schema_name": "DoclingDocument"' in document.chunks[0].content


def test_control_characters_and_glyph_artefacts_leave_the_chunk_text(converter):
    dirty = b"Field notes\n\nRobins\x07 sing\x0cat dawn\tand GLYPH<c=3,font=/F1>dusk \x96 every day."
    document = _convert(converter, "dirty.txt", dirty)
    text = " ".join(c.embed_text for c in document.chunks)
    for artefact in ("\x07", "\x0c", "\t", "GLYPH<", "\x96"):
        assert artefact not in text
    assert "Robins sing" in text and "at dawn and" in text and "– every day" in text


def test_a_legacy_office_file_without_libreoffice_is_refused_naming_soffice(converter, monkeypatch):
    from haiku.core.errors import ConversionError

    monkeypatch.setenv("PATH", "/nonexistent")  # no soffice on PATH
    with pytest.raises(ConversionError, match="soffice"):
        _convert(converter, "old.doc", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(512))


def test_an_image_bomb_is_refused_before_it_is_decoded(converter):
    import io

    from PIL import Image

    from haiku.core.errors import ConversionError

    out = io.BytesIO()
    Image.new("1", (9_000, 9_000)).save(out, format="PNG")  # 81 megapixels, a few kB compressed
    with pytest.raises(ConversionError, match="megapixel"):
        _convert(converter, "bomb.png", out.getvalue())


def test_ocr_mode_off_reads_no_text_from_an_image():
    from haiku.core.convert.ocr import image_document

    scan = image_document("scan.png", text_image("Redshanks alarm the marsh"), mode="off")
    assert [item.text for item in scan.document.texts] == []
