"""Image queries end to end: pictures embedded at ingest, then searched with an image (docs/pictures.md).

One world: two databases, ``birds`` (a Word document with a red and a blue
picture, and a Markdown note) and ``plants`` (a Word document with a green
picture), ingested by the real ``haiku-ingester run-batch`` with a multimodal
embedder at a scripted endpoint on 127.0.0.1 (``MultimodalServer``: no
multimodal embedding model can run here). Then the real ``haiku-rag search
--image``, the client's ``search_by_image`` and the MCP tool
``search_documents_by_image`` search them with picture files.
"""

from __future__ import annotations

import base64
import io
import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from ingester_support import CliResult, fs_source, run_cli, write_ingester_config

from multimodal_server import DIM, MODEL, MultimodalServer, multimodal_embeddings
from support import cli_env, solid_png, write_config

pytestmark = pytest.mark.slow

RED, BLUE, GREEN = solid_png((255, 0, 0), (200, 150)), solid_png((0, 0, 255), (180, 120)), solid_png((0, 160, 0))
YELLOW = solid_png((255, 255, 0))  # in no document


HAIKU_RAG = Path(sys.executable).parent / "haiku-rag"


def rag_cli(*args: str, config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(HAIKU_RAG), "--config", str(config), *args], capture_output=True, text=True, env=cli_env(), timeout=240
    )


def _docx(path: Path, title: str, text: str, pictures: list[bytes]) -> None:
    from docx import Document
    from docx.shared import Inches

    document = Document()
    document.add_heading(title, level=1)
    document.add_paragraph(text)
    for png in pictures:
        document.add_picture(io.BytesIO(png), width=Inches(2))
        document.add_paragraph("More text after the picture.")
    path.parent.mkdir(parents=True, exist_ok=True)
    document.save(path)


@dataclass
class World:
    root: Path
    config: Path
    server: MultimodalServer
    run: CliResult
    pictures: Path
    counts: dict[str, int] = field(default_factory=dict)

    def search(self, *args: str, config: Path | None = None) -> Any:
        return rag_cli("search", *args, config=config or self.config)


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Any:
    root = tmp_path_factory.mktemp("image-queries")
    _docx(root / "birds" / "herons.docx", "Herons", "Grey herons nest in colonies.", [RED, BLUE])
    (root / "birds" / "notes.md").write_text("# Notes\n\nHerons stand still for a long time.\n")
    _docx(root / "plants" / "ferns.docx", "Ferns", "Ferns grow in shade.", [GREEN])
    pictures = root / "pictures"
    pictures.mkdir()
    for name, png in {"red.png": RED, "blue.png": BLUE, "green.png": GREEN, "yellow.png": YELLOW}.items():
        (pictures / name).write_bytes(png)
    (pictures / "notes.txt").write_text("not a picture")
    server = MultimodalServer()
    config = write_ingester_config(
        root / "haiku.rag.yaml",
        data_dir=root / "data",
        databases={"birds": root / "birds.lancedb", "plants": root / "plants.lancedb"},
        ingested={"birds": [fs_source(root / "birds")], "plants": [fs_source(root / "plants")]},
        embeddings=multimodal_embeddings(server.base_url),
    )
    try:
        run = run_cli(["run-batch"], config=config, timeout=600)
        yield World(root, config, server, run, pictures)
    finally:
        server.close()


def _json(result: Any) -> Any:
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


def _variant(world: World, name: str, embeddings: dict[str, Any]) -> Path:
    import yaml

    data = yaml.safe_load(world.config.read_text())
    data["embeddings"] = embeddings
    return write_config(world.root / f"{name}.yaml", data)


async def test_ingest_embeds_each_stored_picture_as_an_image(world):
    from haiku.core.config import load_config
    from haiku.core.scope import DatabaseScope
    from haiku.core.store import Store

    assert world.run.returncode == 0, world.run.stderr[-3000:]
    images = world.server.image_requests()
    assert len(images) == 3  # red, blue, green: each stored picture once
    events = [json.loads(line) for line in world.run.stderr.splitlines() if line.startswith("{")]
    embedded = [e for e in events if e.get("event") == "pictures embedded"]
    assert sorted(e["pictures"] for e in embedded) == [1, 2]
    config = load_config(world.config)
    for ref in DatabaseScope.resolve(config).databases:
        store = await Store.open(ref, config, read_only=True)
        try:
            world.counts[ref.name] = await store.count_picture_vectors()
            assert store.identity is not None and store.identity.multimodal
        finally:
            await store.close()
    assert world.counts == {"birds": 2, "plants": 1}


def test_search_image_returns_that_pictures_document_first_across_databases(world):
    red = _json(world.search("--image", str(world.pictures / "red.png"), "--json"))
    assert red[0]["source"] == "birds" and red[0]["document_uri"].endswith("herons.docx")
    assert red[0]["picture_ref"].startswith("#/pictures/") and red[0]["score"] == pytest.approx(1.0, abs=1e-3)
    green = _json(world.search("--image", str(world.pictures / "green.png"), "--json", "--limit", "3"))
    assert green[0]["source"] == "plants" and green[0]["document_uri"].endswith("ferns.docx")
    assert {r["source"] for r in green} == {"birds", "plants"}  # fused over both databases
    blue = _json(world.search("--image", str(world.pictures / "blue.png"), "--json", "--limit", "1"))
    assert blue[0]["picture_ref"] != red[0]["picture_ref"]


def test_search_image_prints_each_results_database_and_picture(world):
    shown = world.search("--image", str(world.pictures / "green.png"), "--limit", "2")
    assert shown.returncode == 0, shown.stderr
    assert "database: plants" in shown.stdout and "picture: #/pictures/0" in shown.stdout


def test_search_image_over_one_database_only_searches_it(world):
    only = _json(world.search("--db-name", "birds", "--image", str(world.pictures / "green.png"), "--json"))
    assert only and {r["source"] for r in only} == {"birds"}


async def test_the_client_and_the_mcp_tool_search_by_image(world):
    from mcp import Client

    from haiku.core.config import load_config
    from haiku.rag.client import HaikuRAG
    from haiku.rag.mcp.server import create_mcp_server

    config = load_config(world.config)
    async with HaikuRAG(config=config, read_only=True) as rag:
        [first] = await rag.search_by_image(GREEN, limit=1)
        assert (first.source, first.document_uri.endswith("ferns.docx")) == ("plants", True)
        only = await rag.search_by_image(world.pictures / "red.png", limit=5, sources=["plants"])
        assert {r.source for r in only} == {"plants"}
        server = create_mcp_server(client=rag)
        async with Client(server) as client:
            found = await client.call_tool(
                "search_documents_by_image", {"image": base64.b64encode(RED).decode(), "limit": 2}
            )
            bad = await client.call_tool("search_documents_by_image", {"image": "%%%"})
    text = found.content[0].text
    assert text.startswith("[1/2]") and "Collection: birds" in text and "Picture: #/pictures/" in text
    assert "herons.docx" in text.split("[2/2]")[0]
    assert bad.is_error and "base64" in bad.content[0].text


def test_a_text_only_embedder_refuses_an_image_query_in_one_line(world):
    text_only = _variant(world, "text-only", {})
    refused = world.search("--image", str(world.pictures / "red.png"), config=text_only)
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.strip().splitlines() == [
        "Error: image queries need a multimodal embedder (embeddings.model.provider: openai-multimodal), "
        "but the configured embedder sentence-transformers/all-MiniLM-L6-v2 at 384 dimensions embeds text only"
    ]


def test_a_database_of_the_multimodal_embedder_opened_text_only_asks_for_rebuild(world):
    same_model = {"model": {"provider": "openai", "name": MODEL, "vector_dim": DIM, "base_url": world.server.base_url}}
    text_only = _variant(world, "same-model-text-only", same_model)
    refused = world.search("herons", "--db-name", "birds", config=text_only)
    assert refused.returncode == 1, refused.stdout
    [line] = refused.stderr.strip().splitlines()
    assert "database 'birds'" in line and "rebuild --db-name birds" in line
    assert f"openai-multimodal/{MODEL} at {DIM} dimensions, multimodal" in line
    assert f"the text-only embedder openai/{MODEL}" in line


def test_a_bad_image_file_is_named_in_one_line(world):
    for name, why in (("notes.txt", "is not a PNG, JPEG, GIF or WebP file"), ("absent.png", "does not exist")):
        refused = world.search("--image", str(world.pictures / name))
        assert refused.returncode == 1
        [line] = refused.stderr.strip().splitlines()
        assert line == f"Error: image file {world.pictures / name} {why}"


def test_an_image_and_a_text_query_together_are_a_usage_error(world):
    both = world.search("herons", "--image", str(world.pictures / "red.png"))
    neither = world.search()
    assert both.returncode == 2 and "not both" in both.stderr
    assert neither.returncode == 2 and "--image FILE" in neither.stderr


async def _picture_vectors(config_path: Path, name: str) -> tuple[int, Any]:
    from haiku.core.config import load_config
    from haiku.core.scope import DatabaseScope
    from haiku.core.store import Store

    config = load_config(config_path)
    ref = next(r for r in DatabaseScope.resolve(config).databases if r.name == name)
    store = await Store.open(ref, config, read_only=True, skip_validation=True)
    try:
        return await store.count_picture_vectors(), store.identity
    finally:
        await store.close()


async def test_rebuild_removes_picture_vectors_for_a_text_only_embedder_and_embeds_them_again(world):
    import yaml

    from support import copy_database

    copy_database(world.root / "birds.lancedb", world.root / "birds-copy.lancedb")
    data = yaml.safe_load(world.config.read_text())
    data["lancedb"]["databases"] = {"birds": str(world.root / "birds-copy.lancedb")}
    data["ingester"]["databases"] = {"birds": data["ingester"]["databases"]["birds"]}
    data["storage"]["data_dir"] = str(world.root / "rebuild-data")
    multimodal = write_config(world.root / "rebuild-multimodal.yaml", data)
    text_only = _variant(
        World(world.root, multimodal, world.server, world.run, world.pictures),
        "rebuild-text-only",
        {"model": {"provider": "openai", "name": MODEL, "vector_dim": DIM, "base_url": world.server.base_url}},
    )
    down = run_cli(["rebuild", "--db-name", "birds"], config=text_only, timeout=300)
    assert down.returncode == 0, down.stderr[-2000:]
    count, identity = await _picture_vectors(text_only, "birds")
    assert (count, identity.multimodal) == (0, False)
    asked = len(world.server.image_requests())
    up = run_cli(["rebuild", "--db-name", "birds"], config=multimodal, timeout=300)
    assert up.returncode == 0, up.stderr[-2000:]
    count, identity = await _picture_vectors(multimodal, "birds")
    assert (count, identity.multimodal) == (2, True)
    assert len(world.server.image_requests()) == asked + 2
    found = _json(rag_cli("search", "--image", str(world.pictures / "blue.png"), "--json", config=multimodal))
    assert found[0]["document_uri"].endswith("herons.docx") and found[0]["score"] == pytest.approx(1.0, abs=1e-3)
