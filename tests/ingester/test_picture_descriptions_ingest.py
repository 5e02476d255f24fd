"""`processing.pictures: description` through the real ingester (docs/pictures.md).

One world: a folder holding a Word document with two uncaptioned pictures (a
red and a blue one), ingested by the real ``haiku-ingester run-batch`` with
the vision model at a scripted endpoint on 127.0.0.1 (``VisionServer``; no
vision model can run here). The first run describes both; a run after the
document's text changed asks for nothing (the cache); a run against a model
failing on the blue picture still writes the document.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from ingester_support import CliResult, fs_source, run_cli, write_ingester_config
from vision_server import VisionServer, description_of

from support import solid_png

pytestmark = pytest.mark.slow

RED_SIZE, BLUE_SIZE = (200, 150), (180, 120)


RED, BLUE = solid_png((255, 0, 0), RED_SIZE), solid_png((0, 0, 255), BLUE_SIZE)


def _docx(path: Path, *, extra: str | None = None) -> None:
    from docx import Document
    from docx.shared import Inches

    document = Document()
    document.add_heading("Herons", level=1)
    document.add_paragraph("Grey herons nest in colonies called heronries.")
    document.add_picture(io.BytesIO(RED), width=Inches(2))
    document.add_paragraph("They hunt fish in shallow water.")
    document.add_picture(io.BytesIO(BLUE), width=Inches(2))
    if extra:
        document.add_paragraph(extra)
    path.parent.mkdir(parents=True, exist_ok=True)
    document.save(path)


@dataclass
class DescribedWorld:
    runs: dict[str, CliResult] = field(default_factory=dict)
    asked: dict[str, list[bytes]] = field(default_factory=dict)
    chunks: dict[str, list[str]] = field(default_factory=dict)
    captions: dict[str, dict[str, str | None]] = field(default_factory=dict)


async def _read(location: Path) -> tuple[list[str], dict[str, str | None]]:
    from haiku.core.config import config_from_dict
    from haiku.core.scope import DatabaseRef
    from haiku.core.store import Store

    config = config_from_dict({"storage": {"data_dir": str(location.parent / "read-data")}})
    store = await Store.open(DatabaseRef.configured("db", location), config, read_only=True)
    try:
        [document] = await store.reads.list_documents()
        chunks = [c.content for c in await store.reads.get_chunks(document.id)]
        items = await store.structure.get_document_items(document.id)
    finally:
        await store.close()
    return chunks, {i.self_ref: i.caption for i in items if i.label == "picture"}


@pytest.fixture(scope="module")
async def described(tmp_path_factory) -> DescribedWorld:
    root = tmp_path_factory.mktemp("described")
    folder, location = root / "docs", root / "db.lancedb"
    _docx(folder / "herons.docx")
    vision = VisionServer()
    world = DescribedWorld()
    try:
        config = write_ingester_config(
            root / "haiku.rag.yaml",
            data_dir=root / "data",
            databases={"db": location},
            ingested={"db": [fs_source(folder)]},
            processing={
                "pictures": "description",
                "picture_model": {"base_url": vision.base_url, "name": "scripted-vision", "concurrency": 2},
            },
        )
        steps = [
            ("first", None),
            ("edited", "Herons stand still for a long time."),  # new text, the same pictures
        ]
        for name, extra in steps:
            if extra is not None:
                _docx(folder / "herons.docx", extra=extra)
            vision.reset()
            world.runs[name] = run_cli(["run-batch"], config=config, timeout=600)
            world.asked[name] = vision.images()
            world.chunks[name], world.captions[name] = await _read(location)
        # A model failing on the blue picture, over a fresh cache and database.
        failing_root = root / "failing"
        failing_root.mkdir()
        vision.reset()
        vision.fail.add("#0000ff")
        failing = write_ingester_config(
            failing_root / "haiku.rag.yaml",
            data_dir=failing_root / "data",
            databases={"db": failing_root / "db.lancedb"},
            ingested={"db": [fs_source(folder)]},
            processing={"pictures": "description", "picture_model": {"base_url": vision.base_url, "name": "v"}},
        )
        world.runs["failing"] = run_cli(["run-batch"], config=failing, timeout=600)
        world.asked["failing"] = vision.images()
        world.chunks["failing"], world.captions["failing"] = await _read(failing_root / "db.lancedb")
    finally:
        vision.close()
    return world


def _events(result: CliResult, event: str) -> list[dict[str, Any]]:
    out = []
    for line in result.stderr.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if record.get("event") == event:
            out.append(record)
    return out


def test_each_picture_is_described_once_and_its_description_is_searchable_chunk_text(described):
    assert described.runs["first"].returncode == 0, described.runs["first"].stderr[-2000:]
    assert sorted(described.asked["first"]) == sorted([RED, BLUE])
    text = "\n".join(described.chunks["first"])
    assert f"Picture: {description_of(RED)}" in text
    assert f"Picture: {description_of(BLUE)}" in text


def test_an_uncaptioned_picture_takes_its_description_as_caption(described):
    assert described.captions["first"] == {"#/pictures/0": description_of(RED), "#/pictures/1": description_of(BLUE)}


def test_a_reingest_asks_the_model_only_for_pictures_not_described_before(described):
    assert described.runs["edited"].returncode == 0
    assert any("Herons stand still" in chunk for chunk in described.chunks["edited"])
    assert described.asked["edited"] == []
    assert f"Picture: {description_of(RED)}" in "\n".join(described.chunks["edited"])
    [event] = _events(described.runs["edited"], "pictures described")
    assert (event["asked"], event["cached"], event["described"]) == (0, 2, 2)


def test_the_time_describing_took_is_logged_per_document(described):
    [event] = _events(described.runs["first"], "pictures described")
    assert event["uri"].endswith("herons.docx") and event["database"] == "db"
    assert (event["pictures"], event["asked"], event["failed"]) == (2, 2, 0)
    assert isinstance(event["describe_s"], float) and event["describe_s"] >= 0


def test_a_failing_model_leaves_the_picture_undescribed_and_the_document_written(described):
    run = described.runs["failing"]
    assert run.returncode == 0, run.stderr[-2000:]
    text = "\n".join(described.chunks["failing"])
    assert f"Picture: {description_of(RED)}" in text and "#0000ff" not in text
    assert described.captions["failing"] == {"#/pictures/0": description_of(RED), "#/pictures/1": None}
    [warning] = _events(run, "picture left without a description")
    assert warning["why"].startswith("#/pictures/1: HTTP 500")
