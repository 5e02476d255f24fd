"""Conversion and chunking (docs/ingester.md), file checks, and the conversion worker processes."""

from __future__ import annotations

import asyncio
import io
import os
import signal

import pytest

from haiku.core.embedders import local_model_path
from haiku.ingester.errors import (
    BinaryContentError,
    ConversionCrashedError,
    ConversionError,
    ConversionTimeoutError,
    EmptyFileError,
    FileTooLargeError,
    NotARegularFileError,
    SymlinkLoopError,
    UnknownFileTypeError,
)
from haiku.ingester.sources.files import inspect_file, read_bytes

CHUNK_SIZE = 48
MARKDOWN = (
    "# Field Guide\n\nAn introduction to the guide.\n\n## Birds\n\n"
    + "Sparrows and finches gather near the river every morning. " * 12
    + "\n\n## Trees\n\nOaks grow slowly.\n"
)


def pdf_bytes(pages: list[str], title: str | None = None) -> bytes:
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=letter)
    if title is not None:
        pdf.setTitle(title)
    for text in pages:
        pdf.drawString(72, 720, text)
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def docx_bytes() -> bytes:
    import docx

    document = docx.Document()
    document.add_heading("Quarterly Plan", 1)
    document.add_paragraph("We will plant tomatoes in spring.")
    document.add_heading("Budget", 2)
    document.add_paragraph("Seeds cost little.")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


@pytest.fixture(scope="module")
async def pool():
    """Up to two conversion worker processes, the second started as soon as a file waits.

    With two, when a test kills one the other carries on at once.
    """
    from haiku.ingester.pipeline.pool import ConversionPool

    conversion_pool = ConversionPool(
        size=2, initial=1, starving=lambda: True,
        tokenizer_dir=local_model_path(), chunk_size=CHUNK_SIZE, timeout_s=60,
    )
    await conversion_pool.start()
    yield conversion_pool
    await conversion_pool.close()


async def test_the_pool_starts_one_worker_and_grows_while_files_wait_for_one(pool):
    started_with = len(pool.pids)
    await asyncio.gather(*(pool.convert(name=f"n{i}.md", fmt="md", data=b"# N\n\ntext\n") for i in range(3)))
    assert (started_with, len(pool.pids)) == (1, 2)


@pytest.fixture(scope="module")
def count_tokens():
    """The encoder's own token count (no special tokens, no truncation)."""
    from pathlib import Path

    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(Path(local_model_path()) / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids)


@pytest.fixture(scope="module")
async def guide(pool):
    return await pool.convert(name="guide.md", fmt="md", data=MARKDOWN.encode())


async def test_markdown_chunks_keep_their_headings(guide):
    birds = [c for c in guide.chunks if "Sparrows" in c.content]
    assert birds and all(c.headings[-1] == "Birds" for c in birds)


async def test_the_text_embedded_for_a_chunk_starts_with_its_headings(guide):
    chunk = next(c for c in guide.chunks if c.headings)
    assert chunk.embed_text == "\n".join([*chunk.headings, chunk.content])


async def test_no_chunk_is_longer_than_chunk_size_tokens_headings_included(guide, count_tokens):
    assert len(guide.chunks) > 2
    assert max(count_tokens(c.embed_text) for c in guide.chunks) <= CHUNK_SIZE


async def test_the_title_is_the_first_heading(guide):
    assert guide.title == "Field Guide"


async def test_a_conversion_worker_does_not_load_torch(pool):
    files = {
        "guide.md": ("md", MARKDOWN.encode()),
        "r.html": ("html", b"<html><body><h1>R</h1><p>Bake the bread.</p></body></html>"),
        "plan.docx": ("docx", docx_bytes()),
        "p.pdf": ("pdf", pdf_bytes(["Apples on page one."])),
        "n.txt": ("text", b"Plain notes.\n"),
    }
    # Every format, twice in a row: the idle workers take turns, so each worker converts each one.
    for name, (fmt, data) in files.items():
        for _ in range(2):
            assert (await pool.convert(name=name, fmt=fmt, data=data)).chunks
    assert len(pool.pids) == 2
    for pid in pool.pids:
        with open(f"/proc/{pid}/maps") as maps:
            loaded = maps.read()
        assert "tokenizers" in loaded  # the worker's own chunking library: these are the workers' maps
        assert "libtorch" not in loaded and "libc10" not in loaded


async def test_html_is_converted_to_markdown_with_its_heading(pool):
    html = b"<html><body><h1>Recipes</h1><p>Bake the bread for forty minutes.</p></body></html>"
    document = await pool.convert(name="r.html", fmt="html", data=html)
    assert (document.title, "forty minutes" in document.content) == ("Recipes", True)


async def test_markdown_opening_with_an_image_signature_is_still_markdown(pool):
    text = b"BMI-1 autoantibodies as a biomarker. BM stands for nothing here.\n"
    document = await pool.convert(name="1996292.md", fmt="md", data=text)
    assert "BMI-1 autoantibodies" in document.content


async def test_docx_headings_reach_the_chunks(pool):
    document = await pool.convert(name="plan.docx", fmt="docx", data=docx_bytes())
    assert ["Quarterly Plan", "Budget"] in [c.headings for c in document.chunks]


async def test_pdf_text_is_extracted_with_page_numbers_without_any_model(pool):
    data = pdf_bytes(["Apples on page one.", "Pears on two."])
    document = await pool.convert(name="p.pdf", fmt="pdf", data=data)
    pages = {page for c in document.chunks for page in c.page_numbers}
    assert ("Pears on two." in document.content, pages) == (True, {1, 2})


async def test_plain_text_is_stored_as_is_and_titled_by_its_file_name(pool):
    text = "First line of notes.\n\nSecond paragraph here.\n"
    document = await pool.convert(name="/x/notes.txt", fmt="text", data=text.encode())
    assert (document.content, document.title) == (text, "notes.txt")


async def test_plain_text_reaches_the_chunks_without_markdown_hard_breaks_or_escapes(pool):
    text = "Rent is due on the 1st (each month).\nLate fees: 5% <after> the 5th, see file_name.\n"
    document = await pool.convert(name="rent.txt", fmt="text", data=text.encode())
    assert [c.content for c in document.chunks] == [text.strip()]


async def test_plain_text_opening_with_a_title_line_is_titled_by_it(pool):
    text = "Kestrel notes\n\nKestrels hover over fields.\n"
    document = await pool.convert(name="/x/k.txt", fmt="text", data=text.encode())
    assert (document.title, document.content) == ("Kestrel notes", text)


async def test_a_pdf_is_titled_by_its_metadata_title(pool):
    data = pdf_bytes(["Lava flows downhill."], title="Annual Volcano Report")
    document = await pool.convert(name="report.pdf", fmt="pdf", data=data)
    assert document.title == "Annual Volcano Report"


async def test_a_pdf_without_a_metadata_title_is_titled_by_its_title_line(pool):
    data = pdf_bytes(["Volcano Survey"])  # reportlab records "untitled"
    document = await pool.convert(name="survey.pdf", fmt="pdf", data=data)
    assert document.title == "Volcano Survey"


async def test_a_corrupt_pdf_is_a_conversion_error(pool):
    with pytest.raises(ConversionError, match=r"broken\.pdf"):
        await pool.convert(name="broken.pdf", fmt="pdf", data=b"%PDF-1.4\nnot really a pdf\x00\x01")


# --- files the pipeline refuses before converting ---------------------------------------------


def test_a_zero_byte_file_is_refused_as_empty(tmp_path):
    (tmp_path / "empty.md").write_bytes(b"")
    with pytest.raises(EmptyFileError, match="empty"):
        inspect_file(tmp_path / "empty.md", max_file_size=100)


def test_a_file_over_max_file_size_is_refused(tmp_path):
    (tmp_path / "big.md").write_text("x" * 101)
    with pytest.raises(FileTooLargeError, match="max_file_size"):
        inspect_file(tmp_path / "big.md", max_file_size=100)


def test_a_fifo_is_refused_as_not_a_regular_file(tmp_path):
    os.mkfifo(tmp_path / "pipe.md")
    with pytest.raises(NotARegularFileError, match="FIFO"):
        inspect_file(tmp_path / "pipe.md", max_file_size=100)


def test_a_symlink_loop_is_refused_naming_the_loop(tmp_path):
    os.symlink(tmp_path / "b.md", tmp_path / "a.md")
    os.symlink(tmp_path / "a.md", tmp_path / "b.md")
    with pytest.raises(SymlinkLoopError, match="symlink loop"):
        inspect_file(tmp_path / "a.md", max_file_size=100)


def test_an_unsupported_extension_is_refused_naming_the_formats_command(tmp_path):
    (tmp_path / "x.xyz").write_text("text")
    with pytest.raises(UnknownFileTypeError, match=r"\.xyz.*haiku-ingester formats"):
        inspect_file(tmp_path / "x.xyz", max_file_size=100)


def test_binary_bytes_in_a_markdown_file_are_refused(tmp_path):
    (tmp_path / "fake.md").write_bytes(bytes(range(256)) * 4)
    facts = inspect_file(tmp_path / "fake.md", max_file_size=10_000)
    with pytest.raises(BinaryContentError, match="binary"):
        read_bytes(facts, max_file_size=10_000)


# --- conversion worker processes ----------------------------------------------------------------


@pytest.fixture(scope="module")
def slow_pdf() -> bytes:
    return pdf_bytes([f"Page {i} of a long report about harbours and ships." for i in range(1500)])


async def test_a_conversion_over_the_timeout_fails_and_the_next_one_succeeds(pool, slow_pdf):
    with pytest.raises(ConversionTimeoutError, match="conversion_timeout_s"):
        await pool.convert(name="slow.pdf", fmt="pdf", data=slow_pdf, timeout_s=0.05)
    assert (await pool.convert(name="guide.md", fmt="md", data=MARKDOWN.encode())).title == "Field Guide"


async def test_a_worker_dying_mid_conversion_fails_only_that_file(pool, slow_pdf):
    conversion = asyncio.create_task(pool.convert(name="slow.pdf", fmt="pdf", data=slow_pdf))
    for _ in range(1200):  # a worker replaced by the previous test may still be starting
        if pool.busy_pids:
            break
        await asyncio.sleep(0.05)
    [doomed] = pool.busy_pids
    beside_pdf = pdf_bytes([f"Page {i} about lighthouses." for i in range(12)])  # still converting at the kill
    beside = asyncio.create_task(pool.convert(name="beside.pdf", fmt="pdf", data=beside_pdf))
    for _ in range(1200):  # the other worker takes it (once it is ready)
        if len(pool.busy_pids) == 2 or beside.done():
            break
        await asyncio.sleep(0.05)
    os.kill(doomed, signal.SIGKILL)
    with pytest.raises(ConversionCrashedError, match="died"):
        await conversion
    assert "lighthouses" in (await beside).content  # the file converting beside it is not failed
    assert doomed not in pool.pids and len(pool.pids) == 2  # the dead worker was replaced
    for _ in range(2):  # each worker in turn, the replacement among them
        assert (await pool.convert(name="guide.md", fmt="md", data=MARKDOWN.encode())).title == "Field Guide"


async def test_a_pdf_comes_back_from_its_worker_with_one_page_image_per_page_and_chunk_boxes(pool):
    from PIL import Image

    converted = await pool.convert(name="survey.pdf", fmt="pdf", data=pdf_bytes(["Volcano", "Glacier", "Delta"]))
    pages = converted.structure.pages
    assert [(p.page, p.width, p.height) for p in pages] == [(1, 612, 792), (2, 612, 792), (3, 612, 792)]
    assert Image.open(io.BytesIO(pages[2].png)).size == (612, 792)
    assert [item.page_numbers for item in converted.structure.items] == [[1], [2], [3]]
    boxes = [box for chunk in converted.chunks for box in chunk.boxes]
    assert sorted({box.page for box in boxes}) == [1, 2, 3]
    assert all(round(box.left) == 72 for box in boxes)  # drawn at x = 72 points


async def test_the_next_file_after_a_pdf_gets_its_own_reply_not_a_page_frame(pool):
    await pool.convert(name="one.pdf", fmt="pdf", data=pdf_bytes(["First"]))
    after = await pool.convert(name="after.md", fmt="md", data=b"# After\n\ntext\n")
    assert after.title == "After" and after.structure.pages == []
