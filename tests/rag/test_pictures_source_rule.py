"""The picture methods' source rule and their refusals (docs/client.md#pictures-and-pages).

A chunk or picture id names no database, so a client covering several needs
``source``; a chunk with no page layout is refused with one named error, in
Python and on the command line.
"""

from __future__ import annotations

import pytest
from rag_support import build_config, config_data
from rag_support import invoke as cli

from haiku.core.errors import AmbiguousDatabaseError, NoPageLayoutError, NotFoundError, UnknownDatabaseError
from haiku.rag.client import HaikuRAG
from support import write_config


def _a_chunk_id(built, title: str = "Photosynthesis") -> str:
    return built["papers_docs"][title].id


async def _first_chunk(config, source: str, document_id: str) -> str:
    async with HaikuRAG(config=config) as client:
        return (await client.get_chunks(document_id, source=source))[0].id


@pytest.mark.parametrize("method", ["visualize_chunk", "get_picture_bytes"])
async def test_a_picture_method_on_a_set_without_source_names_the_databases(two_db, built, method):
    args = ("some-chunk",) if method == "visualize_chunk" else ("some-doc", "#/pictures/0")
    async with HaikuRAG(config=two_db) as client:
        with pytest.raises(AmbiguousDatabaseError, match=rf"{method} needs source= .*\(papers, wiki\)"):
            await getattr(client, method)(*args)


@pytest.mark.parametrize("method", ["visualize_chunk", "get_picture_bytes", "get_document_items"])
async def test_a_picture_method_with_an_unknown_source_raises_unknown_database(two_db, method):
    args = ("x",) if method != "get_picture_bytes" else ("x", "#/pictures/0")
    async with HaikuRAG(config=two_db) as client:
        with pytest.raises(UnknownDatabaseError, match=r"unknown database.*archive"):
            await getattr(client, method)(*args, source="archive")


async def test_visualizing_a_markdown_chunk_raises_no_page_layout_naming_chunk_and_database(two_db, built):
    chunk_id = await _first_chunk(two_db, "papers", _a_chunk_id(built))
    async with HaikuRAG(config=two_db) as client:
        with pytest.raises(NoPageLayoutError, match=rf"chunk {chunk_id} in database 'papers' has no page layout"):
            await client.visualize_chunk(chunk_id, source="papers")


async def test_visualizing_an_unknown_chunk_raises_not_found_naming_the_database(built, tmp_path):
    config = build_config(tmp_path / "data", {"papers": built["papers"]})
    async with HaikuRAG(config=config) as client:  # one database: no source needed
        with pytest.raises(NotFoundError, match="database 'papers' holds no chunk with id nope"):
            await client.visualize_chunk("nope")


async def test_document_items_over_a_set_come_from_the_first_holder_or_raise_not_found(two_db, built):
    wiki_doc = built["wiki_docs"]["Cooking pasta"]
    async with HaikuRAG(config=two_db) as client:
        assert isinstance(await client.get_document_items(wiki_doc.id), list)
        with pytest.raises(NotFoundError, match="none of the databases papers, wiki holds a document with id nope"):
            await client.get_document_items("nope")
        with pytest.raises(NotFoundError, match="database 'papers' holds no document"):
            await client.get_document_items(wiki_doc.id, source="papers")


def test_cli_visualize_of_a_markdown_chunk_is_one_error_line_and_exit_1(built, tmp_path):
    import asyncio

    config_path = write_config(tmp_path / "haiku.rag.yaml", config_data(tmp_path / "data", {"papers": built["papers"]}))
    chunk_id = asyncio.run(_first_chunk(build_config(tmp_path / "data", {"papers": built["papers"]}), "papers",
                                        _a_chunk_id(built)))
    done = cli("visualize", chunk_id, "-o", str(tmp_path / "out"), config=config_path)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"Error: chunk {chunk_id} in database 'papers' has no page layout: its document has no pages "
        "(markdown, text, HTML…) or was stored before the database kept page layout"
    ]
    assert not (tmp_path / "out").exists()


async def test_cli_visualize_on_a_set_refuses_a_chunk_several_databases_hold_naming_them(built, tmp_path):
    from support import copy_database

    mirror = copy_database(built["papers"], tmp_path / "mirror.lancedb")  # a copy shares every id
    databases = {"papers": built["papers"], "wiki": built["wiki"], "mirror": mirror}
    config = build_config(tmp_path / "data", databases)
    chunk_id = await _first_chunk(config, "papers", _a_chunk_id(built))
    config_path = write_config(tmp_path / "haiku.rag.yaml", config_data(tmp_path / "data", databases))
    done = cli("visualize", chunk_id, config=config_path)
    assert (done.returncode, done.stderr.strip()) == (
        1,
        f"Error: chunk {chunk_id} is in databases 'papers', 'mirror' (a copied database shares ids); "
        "visualize draws from one: rerun with --db-name and one of them",
    ), done.stderr
