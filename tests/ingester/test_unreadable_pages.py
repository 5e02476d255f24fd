"""Pages OCR could not read are logged and listed by ``status`` under their source, kept
while the file's bytes are the same, and gone once it reads (docs/ingester.md,
"Scanned pages (OCR)"). Real run-batch and status processes over a scanned PDF."""

from __future__ import annotations

import io
import json
import os

import pytest
from ingester_support import fs_source, run_cli, write_files, write_ingester_config

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

LINE = "Sanderlings run along the edge of the waves"


def _scan(*, stained: bool) -> bytes:
    """A small scanned PDF (no text layer): a page of text, then a stained page without text
    (``stained``) or a second page of text, then a blank page."""
    from PIL import Image, ImageDraw, ImageFont

    def page() -> Image.Image:
        return Image.new("L", (827, 600), 248)

    text = page()
    ImageDraw.Draw(text).text((60, 80), LINE, fill=20, font=ImageFont.load_default(size=34))
    second = page()
    if stained:
        ImageDraw.Draw(second).ellipse((200, 120, 600, 480), fill=90)  # a stain, no text
    else:
        ImageDraw.Draw(second).text((60, 80), "Turnstones flip pebbles on the shore", fill=20,
                                    font=ImageFont.load_default(size=34))  # fmt: skip
    out = io.BytesIO()
    text.save(out, format="PDF", save_all=True, append_images=[second, page()], resolution=100.0)
    return out.getvalue()


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("unreadable")
    folder = root / "scans"
    write_files(folder, {"survey.pdf": _scan(stained=True), "notes.md": "# Notes\n\nDunlins feed at low tide.\n"})
    config = write_ingester_config(
        root / "cfg.yaml",
        data_dir=root / "data",
        databases={"docs": root / "docs.lancedb"},
        ingested={"docs": [fs_source(folder, id="scans")]},
    )
    seen: dict = {"run": run_cli(["run-batch"], config=config, timeout=300)}
    seen["status"] = run_cli(["status"], config=config).stdout
    seen["json"] = json.loads(run_cli(["status", "--json"], config=config).stdout)
    stat = (folder / "survey.pdf").stat()  # touched: a new revision, the same bytes
    os.utime(folder / "survey.pdf", ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    run_cli(["run-batch"], config=config, timeout=300)
    seen["touched"] = run_cli(["status"], config=config).stdout
    (folder / "survey.pdf").write_bytes(_scan(stained=False))
    run_cli(["run-batch"], config=config, timeout=300)
    seen["fixed"] = json.loads(run_cli(["status", "--json"], config=config).stdout)
    seen["path"] = str(folder / "survey.pdf")
    return seen


def test_a_page_ocr_could_not_read_is_logged(world):
    assert world["run"].returncode == 0, world["run"].stderr
    assert "page unreadable by OCR" in world["run"].stderr


def test_status_lists_the_file_and_its_unreadable_page_under_its_source(world):
    (source,) = world["json"]["databases"][0]["sources"]
    assert [(entry["path"], entry["pages"]) for entry in source["unreadable_pages"]] == [(world["path"], [2])]
    assert f"unreadable {world['path']}: page(s) 2 " in world["status"]  # the blank page 3 is not unreadable


def test_the_listing_outlasts_a_new_revision_of_the_same_bytes(world):
    assert f"unreadable {world['path']}: page(s) 2 " in world["touched"]


def test_the_listing_goes_once_the_file_reads(world):
    (source,) = world["fixed"]["databases"][0]["sources"]
    assert source["documents"] == 2 and source["unreadable_pages"] == []
