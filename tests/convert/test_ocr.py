"""OCR with the models inside the rapidocr-onnxruntime wheel, nothing downloaded
(docs/ingester.md, "Scanned pages (OCR)")."""

from __future__ import annotations

import subprocess
import sys

import pytest
from format_samples import pdf_with_text_layer, text_image

from haiku.core.embedders import local_model_path

pytestmark = pytest.mark.slow

# Runs in a fresh interpreter whose every network call raises: DNS, connect, and urllib.
NO_NETWORK_OCR = """
import socket, sys, urllib.request
def refuse(*args, **kwargs):
    raise OSError("network blocked in this test process")
socket.getaddrinfo = refuse
socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.create_connection = refuse
urllib.request.urlopen = refuse
try:
    socket.create_connection(("pypi.org", 443))
except OSError as exc:
    assert "blocked" in str(exc)
from haiku.core.convert.converter import Converter
converter = Converter(tokenizer_dir=sys.argv[1], chunk_size=128)
for path in sys.argv[2:]:
    fmt = "pdf" if path.endswith(".pdf") else "image"
    document = converter.convert(name=path, fmt=fmt, data=open(path, "rb").read())
    print(path.rsplit("/", 1)[-1], "|", " ".join(c.content for c in document.chunks), "|", document.chunks[0].page_numbers)
"""


def test_a_scanned_pdf_and_an_image_are_read_with_the_network_blocked(tmp_path):
    (tmp_path / "scan.pdf").write_bytes(text_image("Turnstones flip the pebbles", fmt="PDF"))
    (tmp_path / "photo.jpg").write_bytes(text_image("Wheatears flash white rumps", fmt="JPEG"))
    done = subprocess.run(
        [sys.executable, "-c", NO_NETWORK_OCR, local_model_path(), str(tmp_path / "scan.pdf"), str(tmp_path / "photo.jpg")],
        capture_output=True, text=True, timeout=240,
    )
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(" | ", 1) for line in done.stdout.strip().splitlines())
    assert "Turnstones flip the pebbles" in lines["scan.pdf"] and lines["scan.pdf"].endswith("[1]")
    assert "Wheatears flash white rumps" in lines["photo.jpg"]


def test_the_models_are_the_files_inside_the_wheel():
    from haiku.core.convert.ocr import bundled_models

    paths = bundled_models()
    assert {p.name for p in paths.values()} == {
        "ch_PP-OCRv4_det_infer.onnx", "ch_PP-OCRv4_rec_infer.onnx", "ch_ppocr_mobile_v2.0_cls_infer.onnx",
    }
    assert all("rapidocr_onnxruntime" in p.parts and p.is_file() for p in paths.values())


def test_auto_keeps_a_text_layer_and_force_reads_the_page_by_ocr(converter, tmp_path):
    from haiku.core.convert.converter import Converter

    data = pdf_with_text_layer("Avocets sweep")
    auto = converter.convert(name="text.pdf", fmt="pdf", data=data)
    forced = Converter(tokenizer_dir=local_model_path(), chunk_size=64, ocr="force").convert(
        name="text.pdf", fmt="pdf", data=data
    )
    assert "Avocets sweep" in auto.chunks[0].content
    assert "Avocets" in forced.chunks[0].content and forced.chunks[0].page_numbers == [1]


def test_ocr_off_leaves_a_scanned_pdf_without_text(tmp_path):
    from haiku.core.convert.converter import Converter

    off = Converter(tokenizer_dir=local_model_path(), chunk_size=64, ocr="off")
    document = off.convert(name="scan.pdf", fmt="pdf", data=text_image("Turnstones flip", fmt="PDF"))
    assert "Turnstones" not in " ".join(c.content for c in document.chunks)


def test_the_ocr_keys_are_validated_at_load():
    import pytest

    from haiku.core.config.models import ProcessingConfig

    assert (ProcessingConfig().ocr, ProcessingConfig().ocr_lang) == ("auto", "ch_en")
    with pytest.raises(ValueError, match="ocr"):
        ProcessingConfig(ocr="sometimes")
    with pytest.raises(ValueError, match="ocr_lang"):
        ProcessingConfig(ocr_lang="fr")




def test_a_blank_page_is_not_sent_to_the_models(monkeypatch):
    from PIL import Image

    from haiku.core.convert import ocr

    def no_model():
        raise AssertionError("the OCR models ran on a blank page")

    monkeypatch.setattr(ocr, "_engine", no_model)
    assert ocr.ocr_paragraphs(Image.new("RGB", (800, 1100), (250, 250, 250))) == []


# Reads an A4 page of 36 lines twice in a fresh interpreter, the models kept loaded between
# the reads as in a worker between two pages of a file; prints the RSS (MiB) before, after
# and at the peak, and how much text the second read found.
PAGE_MEMORY = """
from pathlib import Path
from PIL import Image, ImageDraw, ImageFont
from haiku.core.convert.ocr import ocr_paragraphs
def status(key):
    line = next(l for l in Path("/proc/self/status").read_text().splitlines() if l.startswith(key + ":"))
    return int(line.split()[1]) / 1024
page = Image.new("L", (1240, 1754), 250)
draw = ImageDraw.Draw(page)
for i in range(36):
    draw.text((100, 120 + i * 42), f"{i + 1} Sanderlings run along the edge of the waves", fill=20,
              font=ImageFont.load_default(size=30))
page = page.convert("RGB")
before = status("VmRSS")
read = [ocr_paragraphs(page) for _ in range(2)]
print(before, status("VmRSS"), status("VmHWM"), len(" ".join(read[1])))
"""


def test_a_page_read_hands_its_working_memory_back_before_the_next_page():
    done = subprocess.run([sys.executable, "-c", PAGE_MEMORY], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    before, after, peak, text = (float(v) for v in done.stdout.split())
    assert text > 500 and peak - before > 200  # a real page, read with OCR's working memory
    # The models and the libraries they bring stay (about 100 MiB); the page's images and
    # tensors, which the allocator would keep (about 170 MiB more), do not.
    assert after - before < 180

