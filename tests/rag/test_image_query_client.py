"""The client's image query over a database holding no picture vector, and its refusal (docs/pictures.md).

The multimodal endpoint is ``MultimodalServer``, a scripted stand-in on
127.0.0.1 (no multimodal embedding model can run here).
"""

from __future__ import annotations

import pytest
from rag_support import config_data
from rag_support import invoke as cli

from haiku.core.config import config_from_dict
from haiku.core.errors import ImageQueryError
from haiku.core.scope import DatabaseScope
from haiku.core.store import Store
from multimodal_server import MultimodalServer, multimodal_embeddings
from support import solid_png, write_config

RED = solid_png((255, 0, 0))


@pytest.fixture(scope="module")
def endpoint():
    server = MultimodalServer()
    yield server
    server.close()


async def test_a_database_without_picture_vectors_answers_nothing_and_says_so(endpoint, tmp_path):
    from haiku.rag.client import HaikuRAG

    data = config_data(tmp_path / "data", {"empty": str(tmp_path / "empty.lancedb")})
    data["embeddings"] = multimodal_embeddings(endpoint.base_url)
    config = config_from_dict(data)
    store = await Store.open(DatabaseScope.resolve(config).databases[0], config, create=True)
    await store.close()
    async with HaikuRAG(config=config, read_only=True) as client:
        results = await client.search_by_image(RED)
    assert list(results) == [] and list(results.without_pictures) == ["empty"]
    assert "holds no picture vectors" in results.without_pictures["empty"]
    (tmp_path / "red.png").write_bytes(RED)
    shown = cli("search", "--image", str(tmp_path / "red.png"), config=write_config(tmp_path / "c.yaml", data))
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == "No results found."
    assert shown.stderr.startswith("Warning: database 'empty' holds no picture vectors: ")


async def test_a_text_only_client_refuses_an_image_query_before_opening_or_reading_anything(tmp_path):
    from haiku.rag.client import HaikuRAG

    absent = {name: str(tmp_path / f"{name}.lancedb") for name in ("a", "b")}
    config = config_from_dict(config_data(tmp_path / "data", absent))
    async with HaikuRAG(config=config, read_only=True) as client:  # a set opens lazily
        with pytest.raises(ImageQueryError, match=r"^image queries need a multimodal embedder"):
            await client.search_by_image(tmp_path / "absent.png")  # refused before the file is read


async def test_an_image_query_skips_a_database_that_cannot_be_opened_under_skip_and_names_it(endpoint, tmp_path):
    from haiku.core.errors import SourceUnavailableError
    from haiku.rag.client import HaikuRAG

    paths = {"empty": str(tmp_path / "empty.lancedb"), "ghost": str(tmp_path / "ghost.lancedb")}  # ghost: never made
    data = config_data(tmp_path / "data", paths)
    data["embeddings"] = multimodal_embeddings(endpoint.base_url)
    config = config_from_dict(data)
    store = await Store.open(DatabaseScope.resolve(config).databases[0], config, create=True)
    await store.close()
    async with HaikuRAG(config=config, read_only=True) as client:
        with pytest.raises(SourceUnavailableError, match=r"database 'ghost'"):
            await client.search_by_image(RED)  # the default: a database that cannot be read fails the query
    data["search"] = {"on_unavailable": "skip"}
    async with HaikuRAG(config=config_from_dict(data), read_only=True) as client:
        results = await client.search_by_image(RED)
    assert list(results) == [] and list(results.skipped) == ["ghost"] and list(results.without_pictures) == ["empty"]
    assert "does not exist" in results.skipped["ghost"]
