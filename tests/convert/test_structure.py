"""What a converted document keeps beside its text: items, pictures and page images
(docs/ingester.md, "Structure, pictures and page images")."""

from __future__ import annotations

import io
import json
import zlib

import pytest
from PIL import Image

from haiku.core.convert.structure import PICTURES_CAPPED, StructureOptions

SENTENCE = "Curlews probe the estuary mud for worms at low tide."


def _photo(width: int, height: int) -> Image.Image:
    """A picture with real content (a gradient), so it is no blank rule."""
    image = Image.new("RGB", (width, height))
    image.putdata([(x * 255 // width, y * 255 // height, 128) for y in range(height) for x in range(width)])
    return image


def pdf_with_pictures(*sizes: tuple[int, int], pages: int = 2) -> bytes:
    """A letter-size PDF of ``pages`` pages: a sentence on each, the pictures of ``sizes`` on the first."""
    from reportlab.lib.pagesizes import letter
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=letter)
    for page in range(pages):
        pdf.setFont("Helvetica", 12)
        pdf.drawString(72, 720, f"{SENTENCE} Page {page + 1}.")
        if page == 0:
            y = 600
            for width, height in sizes:
                pdf.drawImage(ImageReader(_photo(width, height)), 72, y - height, width=width, height=height)
                y -= height + 20
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


@pytest.fixture(scope="module")
def converter_with():
    from haiku.core.convert.converter import Converter
    from haiku.core.embedders import local_model_path

    def build(**options) -> Converter:
        return Converter(tokenizer_dir=local_model_path(), chunk_size=64, structure=StructureOptions(**options))

    return build


def test_a_pdf_keeps_its_items_a_picture_page_images_and_chunk_boxes(converter):
    document = converter.convert(name="birds.pdf", fmt="pdf", data=pdf_with_pictures((160, 120), (20, 20)))
    structure = document.structure
    assert structure is not None and structure.docling_version
    pictures = [item for item in structure.items if item.label == "picture"]
    [picture] = pictures  # the 20 px square is below processing.min_picture_px
    assert picture.has_image and picture.page_numbers == [1]
    assert Image.open(io.BytesIO(structure.images[picture.self_ref])).size[0] >= 64
    [box] = picture.boxes
    assert (box.page, round(box.left), round(box.right)) == (1, 72, 232)
    assert 180 < box.top < box.bottom < 320  # top-left origin: 792 - 600 = 192 points from the top
    texts = [item for item in structure.items if item.label == "text"]
    assert [t.page_numbers for t in texts] == [[1], [2]] and SENTENCE in texts[0].text
    assert [(p.page, p.width, p.height, p.scale) for p in structure.pages] == [(1, 612, 792, 1.0), (2, 612, 792, 1.0)]
    assert Image.open(io.BytesIO(structure.pages[0].png)).size == (612, 792)
    refs = {item.self_ref for item in structure.items}
    first = document.chunks[0]
    assert first.item_refs and set(first.item_refs) <= refs
    assert first.boxes and all(0 <= b.left < b.right <= 612 and 0 <= b.top < b.bottom <= 792 for b in first.boxes)
    stored = json.loads(zlib.decompress(structure.docling_document))
    assert stored["pictures"] and all(p.get("image") is None for p in stored["pictures"])  # stored once, as items


def test_the_processing_bounds_switch_off_pictures_and_page_images_and_scale_pages(converter_with):
    data = pdf_with_pictures((160, 120), pages=1)
    bare = converter_with(pictures="none", page_images=False).convert(name="b.pdf", fmt="pdf", data=data)
    assert bare.structure.images == {} and bare.structure.pages == []
    assert not any(item.has_image for item in bare.structure.items)
    half = converter_with(page_image_scale=0.5).convert(name="b.pdf", fmt="pdf", data=data)
    assert [(p.width, p.height, p.scale) for p in half.structure.pages] == [(306, 396, 0.5)]


def test_a_document_past_max_pictures_stores_that_many_and_says_so_in_its_metadata(converter_with):
    data = pdf_with_pictures((100, 80), (100, 80), (100, 80), pages=1)
    document = converter_with(max_pictures=2).convert(name="many.pdf", fmt="pdf", data=data)
    assert len(document.structure.images) == 2
    assert document.metadata[PICTURES_CAPPED] == {"found": 3, "stored": 2, "max_pictures": 2}
    assert sum(item.has_image for item in document.structure.items) == 2


def test_a_docx_keeps_its_embedded_picture(converter):
    import docx

    picture = io.BytesIO()
    _photo(120, 90).save(picture, format="PNG")
    picture.seek(0)
    word = docx.Document()
    word.add_heading("Waders", level=1)
    word.add_paragraph(SENTENCE)
    word.add_picture(picture)
    buffer = io.BytesIO()
    word.save(buffer)
    document = converter.convert(name="waders.docx", fmt="docx", data=buffer.getvalue())
    structure = document.structure
    assert [(i.label, i.text) for i in structure.items][:2] == [("section_header", "Waders"), ("text", SENTENCE)]
    [picture_item] = [i for i in structure.items if i.label == "picture"]
    assert picture_item.has_image and Image.open(io.BytesIO(structure.images[picture_item.self_ref])).size == (120, 90)
    assert structure.pages == []  # not paginated


def test_plain_text_and_code_keep_no_structure_markdown_keeps_its_items(converter):
    assert converter.convert(name="notes.txt", fmt="text", data=SENTENCE.encode()).structure is None
    assert converter.convert(name="tool.py", fmt="code", data=b"print('hi')\n").structure is None
    markdown = converter.convert(name="n.md", fmt="md", data=f"# Waders\n\n## Curlews\n\n{SENTENCE}\n".encode())
    items = markdown.structure.items
    assert [(i.label, i.text) for i in items] == [("title", "Waders"), ("section_header", "Curlews"), ("text", SENTENCE)]
    assert [i.order for i in items] == [0, 1, 2]
    assert markdown.structure.pages == [] and markdown.chunks[0].boxes == []
    assert markdown.chunks[0].item_refs == [items[2].self_ref]


def test_a_file_name_that_is_not_utf8_still_keeps_its_structure(converter):
    name = "caf\udce9.md"  # a Latin-1 name as Python reads it from disk
    document = converter.convert(name=name, fmt="md", data=f"# Cafe\n\n{SENTENCE}\n".encode())
    stored = json.loads(zlib.decompress(document.structure.docling_document))
    # The name is read as text, its undecodable byte as U+FFFD (docs/ingester.md, "Titles").
    assert stored["name"] == "caf\ufffd" and [i.text for i in document.structure.items][-1] == SENTENCE
