"""Every format ingested and searched, and hostile files of the new formats dead-lettered
(docs/ingester.md, "Formats", "Scanned pages (OCR)").

One folder holds a small file of each format (made in the test, as a user's
tools would), a scanned PDF (text rendered to an image, saved as PDF: no text
layer) and hostile files: a corrupt PPTX and XLSX, an encrypted PDF, an image
bomb, a binary file named .py and a CSV just under ``max_file_size``. One
``run-batch`` ingests it all; each good file is found by full-text search,
each hostile one is dead with its reason (the binary .py is skipped as not
text), and none of them touches the others.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from ingester_support import fs_source, run_cli, write_files, write_ingester_config

from support import cli_env

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "convert"))
from format_samples import SAMPLES, text_image  # noqa: E402

SCANNED = "Sandpipers probe the wet sand"
MAX_FILE_SIZE = 400_000


def _encrypted_pdf() -> bytes:
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    pdf = canvas.Canvas(out, encrypt="a-user-password")
    pdf.drawString(72, 720, "Sealed notes about terns")
    pdf.showPage()
    pdf.save()
    return out.getvalue()


def _corrupt_zip(members: dict[str, str]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    return out.getvalue()


def _image_bomb() -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("1", (9_000, 9_000)).save(out, format="PNG")  # 81 megapixels in a few kB
    return out.getvalue()


HOSTILE: dict[str, tuple[bytes, str]] = {
    "broken.pptx": (_corrupt_zip({"[Content_Types].xml": "<Types/>", "ppt/presentation.xml": "<p:presentation"}), "broken.pptx"),
    "broken.xlsx": (b"PK\x03\x04" + bytes(range(256)) * 8, "broken.xlsx"),
    "sealed.pdf": (_encrypted_pdf(), "sealed.pdf"),
    "bomb.png": (_image_bomb(), "megapixel"),
}
NOT_TEXT = {"tool.py": b"\x7fELF\x02\x01\x01\x00" + bytes(4096)}  # skipped as not text, never dead


@pytest.fixture(scope="module")
def formats_world(tmp_path_factory):
    root = tmp_path_factory.mktemp("formats")
    folder = root / "docs"
    files: dict[str, str | bytes] = {name: make(sentence) for name, (make, sentence) in SAMPLES.items()}
    files["scanned.pdf"] = text_image(SCANNED, fmt="PDF")
    files.update({name: data for name, (data, _reason) in HOSTILE.items()})
    files.update(NOT_TEXT)
    row = "heron,3,marsh,the quick brown fox jumps over the lazy dog\n"
    files["big.csv"] = "bird,count,habitat,note\n" + row * ((MAX_FILE_SIZE - 100) // len(row))
    write_files(folder, files)
    config = write_ingester_config(
        root / "cfg.yaml",
        data_dir=root / "data",
        databases={"notes": root / "notes.lancedb"},
        ingested={"notes": [fs_source(folder, id="notes", max_file_size=MAX_FILE_SIZE)]},
        # 120 s leaves the OCR of a scan (~15 s on a loaded machine) eight times its time, and the
        # big CSV (~10 s alone) as much, with other test files running on the other cores.
        processing={"conversion_timeout_s": 120},
    )
    batch = run_cli(["run-batch"], config=config, timeout=800)
    status = json.loads(run_cli(["status", "--json"], config=config).stdout)
    dead = {job["uri"].rsplit("/", 1)[-1]: job["error"] for job in status["databases"][0]["sources"][0]["dead_jobs"]}
    skipped = status["databases"][0]["sources"][0]["skipped"]
    return {"root": root, "config": config, "batch": batch, "dead": dead, "skipped": skipped}


async def _fts(config: Path, query: str) -> list[str]:
    from haiku.core.config import load_config
    from haiku.rag.client import HaikuRAG

    async with HaikuRAG(config=load_config(config), read_only=True) as client:
        return [r.document_uri.rsplit("/", 1)[-1] for r in await client.search(query, search_type="fts", limit=5)]


async def test_every_format_is_ingested_and_found_by_full_text_search(formats_world):
    missing = {}
    for name, (_make, sentence) in SAMPLES.items():
        found = await _fts(formats_world["config"], f'"{sentence}"')
        if name not in found:
            missing[name] = found
    assert missing == {}, formats_world["batch"].stderr[-3000:]


def test_a_scanned_pdf_is_read_by_ocr_and_found_with_search_fts(formats_world):
    done = subprocess.run(
        [str(Path(sys.executable).parent / "haiku-rag"), "--config", str(formats_world["config"]),
         "search", "-s", "fts", SCANNED],
        capture_output=True, text=True, timeout=240, env=cli_env(),
    )
    assert done.returncode == 0, done.stderr
    assert "scanned.pdf" in done.stdout and "Sandpipers" in done.stdout


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_file_is_dead_with_its_reason(formats_world, name):
    assert name in formats_world["dead"], formats_world["dead"]
    assert HOSTILE[name][1] in formats_world["dead"][name]


def test_a_binary_file_named_py_is_skipped_as_not_text(formats_world):
    assert formats_world["skipped"] == {"not_text": {"files": 1}}
    assert "tool.py" not in formats_world["dead"]


def test_hostile_files_affect_nothing_else_and_the_big_csv_finishes(formats_world):
    good = set(SAMPLES) | {"scanned.pdf"}
    assert good.isdisjoint(formats_world["dead"]), formats_world["dead"]
    # The CSV just under max_file_size (6,000 rows) is ingested well within the conversion limit.
    assert "big.csv" not in formats_world["dead"], formats_world["dead"]["big.csv"]
    assert set(formats_world["dead"]) <= set(HOSTILE)


async def test_code_files_record_their_language_and_keep_a_fenced_block(formats_world):
    from haiku.core.config import load_config
    from haiku.rag.client import HaikuRAG

    async with HaikuRAG(config=load_config(formats_world["config"]), read_only=True) as client:
        documents = {d.uri.rsplit("/", 1)[-1]: d for d in await client.list_documents(include_content=True)}
    assert documents["birds.py"].metadata.get("language") == "python"
    assert documents["birds.go"].metadata.get("language") == "go"
    assert "```python" in documents["birds.py"].content
    assert "language" not in documents["deck.pptx"].metadata
