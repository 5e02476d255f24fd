"""`haiku-rag inspect`, driven headless with Textual's pilot over real databases (docs/cli.md, "inspect").

Each test opens a read-only client over databases the fixtures built with the
real embedding model, runs the inspector with ``App.run_test()``, presses keys
and reads what the widgets show.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from rag_support import PAPERS, WIKI, build_config
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, OptionList, Static

from haiku.core.models import Chunk, Document
from haiku.core.scope import DatabaseRef
from haiku.rag.apps.inspector import Catalog
from haiku.rag.apps.inspector.app import InspectorApp
from haiku.rag.apps.inspector.render import NO_PAGE_LAYOUT
from haiku.rag.client import HaikuRAG

pytestmark = pytest.mark.slow

MANUAL = [
    (["Field manual", "Safety"], [1], "Wear a helmet near the crater rim."),
    (["Field manual", "Safety"], [1, 2], "Carry water and a radio at all times."),
    (["Field manual", "Sampling"], [2], "Collect ash samples in sealed jars."),
]


@pytest.fixture(scope="session")
async def manual_db(corpus_dir, embedder) -> Path:
    """One document whose chunks carry headings and pages, as a converted PDF's do."""
    from haiku.core.store import Store

    path = corpus_dir / "manual.lancedb"
    store = await Store.open(DatabaseRef.configured("manual", path), build_config(corpus_dir / "data"), create=True)
    try:
        texts = [text for _, _, text in MANUAL]
        await store.writer().documents.upsert_document(
            Document(uri="file:///corpus/manual/field-manual.pdf", title="Field manual", content="\n\n".join(texts)),
            [Chunk(content=text, order=i, headings=h, page_numbers=p) for i, (h, p, text) in enumerate(MANUAL)],
            await embedder.embed_documents(texts),
        )
    finally:
        await store.close()
    return path


@asynccontextmanager
async def inspector(config) -> AsyncIterator[tuple[InspectorApp, Pilot]]:
    async with HaikuRAG(config=config, read_only=True) as client:
        app = InspectorApp(Catalog(client))
        async with app.run_test(size=(160, 48)) as pilot:
            yield app, pilot


async def until(pilot: Pilot, condition: Callable[[], bool], what: str, seconds: float = 60.0) -> None:
    """Let the app's workers run until ``condition`` holds."""
    deadline = asyncio.get_running_loop().time() + seconds
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.05)


def titles(app: InspectorApp) -> list[str]:
    table = app.query_one("#documents", DataTable)
    return [str(table.get_row_at(i)[0]) for i in range(table.row_count)]


def column(app: InspectorApp, index: int) -> list[str]:
    table = app.query_one("#documents", DataTable)
    return [str(table.get_row_at(i)[index]) for i in range(table.row_count)]


def shown(app: InspectorApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).content)


async def search(app: InspectorApp, pilot: Pilot, query: str) -> None:
    """Search from the dialog; return once the hits are listed and have the focus (Enter then jumps)."""
    await pilot.press("slash", *query, "enter")
    await until(pilot, lambda: app.focused is not None and app.focused.id == "search-hits", "the hits")


async def open_manual_chunk(app: InspectorApp, pilot: Pilot, order: int) -> None:
    await until(pilot, lambda: titles(app) == ["Field manual"] and len(app.chunks) == 3, "the manual's chunks")
    app.query_one("#chunks", OptionList).focus()
    await pilot.pause()  # focus moves on the next turn of the loop
    await pilot.press(*["down"] * order)
    await until(pilot, lambda: app.chunk is not None and app.chunk.order == order, f"chunk #{order}")
    await until(pilot, lambda: "Page" in shown(app, "#page-view"), "the page pane")


@pytest.fixture
def manual_config(manual_db, tmp_path):
    return build_config(tmp_path / "data", {"manual": str(manual_db)})


async def test_the_first_screen_lists_the_databases_and_the_first_ones_documents_with_chunk_counts(two_db):
    async with inspector(two_db) as (app, pilot):
        databases = app.query_one("#databases", OptionList)
        assert [str(databases.get_option_at_index(i).prompt) for i in range(databases.option_count)] == [
            "papers", "wiki",
        ]
        await until(pilot, lambda: titles(app) == [title for title, _ in PAPERS], "papers' documents")
        await until(pilot, lambda: "…" not in column(app, 1), "the chunk counts")
        assert column(app, 1) == [str(len(texts)) for _, texts in PAPERS]
        assert column(app, 4)[0] == "file:///corpus/papers/Photosynthesis.md"


async def test_moving_down_the_databases_shows_the_next_databases_documents(two_db):
    async with inspector(two_db) as (app, pilot):
        await until(pilot, lambda: titles(app) == [title for title, _ in PAPERS], "papers' documents")
        await pilot.press("down")
        await until(pilot, lambda: titles(app) == [title for title, _ in WIKI], "wiki's documents")
        assert app.query_one("#documents-pane").border_title == "Documents of wiki"


async def test_the_filter_keeps_the_documents_whose_title_or_uri_holds_the_text(two_db):
    async with inspector(two_db) as (app, pilot):
        await until(pilot, lambda: len(titles(app)) == 3, "papers' documents")
        await pilot.press("f", *"NETWORK")
        assert app.query_one("#document-filter", Input).value == "NETWORK"
        assert titles(app) == ["Neural networks"]
        assert app.query_one("#documents-pane").border_subtitle == "1 of 3"
        await pilot.press("escape")
        assert app.focused is app.query_one("#documents", DataTable)


async def test_opening_a_document_lists_its_chunks_and_shows_the_first_ones_content(two_db):
    async with inspector(two_db) as (app, pilot):
        await until(pilot, lambda: len(titles(app)) == 3, "papers' documents")
        app.query_one("#documents", DataTable).focus()
        await pilot.pause()  # focus moves on the next turn of the loop
        await pilot.press("down")
        await until(pilot, lambda: app.document is not None and app.document.title == "Neural networks"
                    and len(app.chunks) == 2, "the chunks of Neural networks")
        listing = app.query_one("#chunks", OptionList)
        assert [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)] == [
            "#0   Neural networks learn representations from data.",
            "#1   Backpropagation computes gradients for training.",
        ]
        assert shown(app, "#chunk-text").endswith("\n\nNeural networks learn representations from data.")


async def test_a_chunk_shows_its_headings_and_pages(manual_config):
    async with inspector(manual_config) as (app, pilot):
        await open_manual_chunk(app, pilot, 1)
        text = shown(app, "#chunk-text")
        assert "Headings: Field manual > Safety\nPages: 1, 2\n\nCarry water and a radio at all times." in text


async def test_the_page_pane_shows_the_text_on_the_chunks_first_page_with_the_chunk_marked(manual_config):
    async with inspector(manual_config) as (app, pilot):
        await open_manual_chunk(app, pilot, 1)
        assert shown(app, "#page-view") == (
            f"Page 1  (1 of 2)\n{NO_PAGE_LAYOUT}\n\n"
            "  #0 Wear a helmet near the crater rim.\n\n"
            "▶ #1 Carry water and a radio at all times.\n"
        )


async def test_v_shows_the_visual_grounding_page_by_page(manual_config):
    async with inspector(manual_config) as (app, pilot):
        await open_manual_chunk(app, pilot, 1)
        await pilot.press("v")
        await until(pilot, lambda: app.screen.query("#dialog-body"), "the pages dialog")
        assert shown(app, "#dialog-body").startswith("Page 1  (1 of 2)\n")
        await pilot.press("right")
        assert shown(app, "#dialog-body") == (
            f"Page 2  (2 of 2)\n{NO_PAGE_LAYOUT}\n\n"
            "▶ #1 Carry water and a radio at all times.\n\n"
            "  #2 Collect ash samples in sealed jars.\n"
        )
        await pilot.press("escape")
        assert not app.screen.query("#dialog-body")


async def test_c_shows_the_context_the_model_gets_for_the_chunk_after_expansion(manual_config, manual_db):
    async with inspector(manual_config) as (app, pilot):
        await open_manual_chunk(app, pilot, 1)
        chunk, document = app.chunk, app.document
        await pilot.press("c")
        await until(pilot, lambda: app.screen.query("#dialog-body"), "the context dialog")
        # Expansion grows the chunk with its neighbours (all three fit in search.max_context_chars).
        assert shown(app, "#dialog-body") == "\n".join([
            "[1/1]",
            f"Chunk ID: {chunk.id}",
            f"Document ID: {document.id}",
            "Title: Field manual",
            "Source: file:///corpus/manual/field-manual.pdf",
            "Section: Field manual > Safety",
            "Pages: 1, 2",
            "Score: 0.0000",
            "Content:",
            "\n\n".join(text for _, _, text in MANUAL),
        ])


async def test_slash_searches_every_database_and_jumps_to_the_chosen_hit(two_db):
    async with inspector(two_db) as (app, pilot):
        await until(pilot, lambda: len(titles(app)) == 3, "papers' documents")
        await search(app, pilot, "where tectonic plates meet")
        first = str(app.screen.query_one("#search-hits", OptionList).get_option_at_index(0).prompt)
        assert first.startswith("[wiki] Plate tectonics")
        await pilot.press("enter")
        await until(pilot, lambda: app.chunk is not None and app.entry is not None and app.entry.name == "wiki",
                    "the jump to the hit")
        assert titles(app) == [title for title, _ in WIKI]
        assert app.document.title == "Plate tectonics"
        assert shown(app, "#chunk-text").endswith("Earthquakes happen where tectonic plates meet.")
        assert app.query_one("#databases", OptionList).highlighted == 1


async def test_a_jump_clears_a_filter_that_hides_the_hit(two_db):
    async with inspector(two_db) as (app, pilot):
        await until(pilot, lambda: len(titles(app)) == 3, "papers' documents")
        await pilot.press("f", *"photo", "enter")
        assert titles(app) == ["Photosynthesis"]
        await search(app, pilot, "volcanoes erupt lava")
        await pilot.press("enter")
        await until(pilot, lambda: app.document is not None and app.document.title == "Volcanoes"
                    and app.chunk is not None, "the jump to Volcanoes")
        assert app.query_one("#document-filter", Input).value == ""
        assert titles(app) == [title for title, _ in PAPERS]


async def test_i_shows_the_databases_embedder_counts_and_tags(papers_tagged, tmp_path):
    config = build_config(tmp_path / "data", {"papers": str(papers_tagged["path"])})
    async with inspector(config) as (app, pilot):
        await until(pilot, lambda: len(titles(app)) == 4, "papers' documents")
        await pilot.press("i")
        await until(pilot, lambda: app.screen.query("#dialog-body"), "the info dialog")
        lines = [line.strip() for line in shown(app, "#dialog-body").splitlines()]
        assert "database  papers" in lines
        assert "embedder  sentence-transformers/all-MiniLM-L6-v2, 384 dimensions" in lines
        assert "documents  4" in lines
        assert "chunks  6" in lines
        assert "tags  1: r1" in lines


async def test_a_chunk_highlighted_while_the_app_closes_is_dropped_quietly(manual_config):
    # The chunk list highlights its first chunk once it is filled; when that message is
    # handled after the app began closing, the panes it would update are gone.
    async with inspector(manual_config) as (app, pilot):
        await until(pilot, lambda: titles(app) == ["Field manual"] and len(app.chunks) == 3, "the manual's chunks")
        await app.query_one("#chunk-text", Static).remove()
        app.query_one("#chunks", OptionList).highlighted = 2
        await pilot.pause()
        assert app.chunk is not None and app.chunk.order == 2
        assert app.return_code is None  # still running, no error raised


async def test_an_entry_configured_at_a_tag_shows_the_documents_it_held_then(papers_tagged, tmp_path):
    config = build_config(tmp_path / "data", {"papers": {"location": str(papers_tagged["path"]), "tag": "r1"}})
    async with inspector(config) as (app, pilot):
        await until(pilot, lambda: len(titles(app)) == 3, "papers' documents at r1")
        assert "Glaciers" not in titles(app)
        databases = app.query_one("#databases", OptionList)
        assert str(databases.get_option_at_index(0).prompt) == "papers @ r1  read-only at the tag"


async def test_a_database_that_cannot_be_opened_is_named_in_place_and_the_others_still_browse(built, tmp_path):
    config = build_config(tmp_path / "data", {"ghost": str(tmp_path / "ghost.lancedb"), "wiki": str(built["wiki"])})
    async with inspector(config) as (app, pilot):
        await until(pilot, lambda: "ghost" in shown(app, "#chunk-text"), "the error")
        assert shown(app, "#chunk-text").startswith("Error: database 'ghost' does not exist")
        await pilot.press("down")
        await until(pilot, lambda: titles(app) == [title for title, _ in WIKI], "wiki's documents")
    assert not (tmp_path / "ghost.lancedb").exists()


async def test_question_mark_shows_the_keys(two_db):
    async with inspector(two_db) as (app, pilot):
        await pilot.press("question_mark")
        assert "c        the context the model gets for the selected chunk" in shown(app, "#dialog-body")


async def test_q_quits(two_db):
    async with inspector(two_db) as (app, pilot):
        await until(pilot, lambda: len(titles(app)) == 3, "papers' documents")
        await pilot.press("q")
        await pilot.pause()
        assert app.return_code == 0
        assert not app.is_running


async def test_a_long_listing_paints_its_first_rows_then_adds_the_rest_in_order(two_db, monkeypatch):
    import haiku.rag.apps.inspector.document_table as document_table

    monkeypatch.setattr(document_table, "FIRST_ROWS", 1)  # one row before the first paint, one per refresh
    monkeypatch.setattr(document_table, "ROW_BATCH", 1)
    async with inspector(two_db) as (app, pilot):
        await until(pilot, lambda: titles(app) == [title for title, _ in PAPERS], "papers' documents, in order")
        await until(pilot, lambda: "…" not in column(app, 1), "the chunk counts")
        assert column(app, 1) == [str(len(texts)) for _, texts in PAPERS]
        assert app.query_one("#documents-pane").border_subtitle == "3"
        await pilot.press("down")  # to the next database while nothing is left to add
        await until(pilot, lambda: titles(app) == [title for title, _ in WIKI], "wiki's documents only")


async def test_a_jump_reaches_a_document_whose_row_was_not_listed_yet(two_db, monkeypatch):
    import haiku.rag.apps.inspector.document_table as document_table

    monkeypatch.setattr(document_table, "FIRST_ROWS", 1)
    monkeypatch.setattr(document_table, "ROW_BATCH", 0)  # the refreshes add no row: only the jump lists the rest
    async with inspector(two_db) as (app, pilot):
        await until(pilot, lambda: len(titles(app)) == 1, "the first row")
        await pilot.pause(0.2)
        assert titles(app) == ["Photosynthesis"]
        await search(app, pilot, "volcanoes erupt lava")
        await pilot.press("enter")
        await until(pilot, lambda: app.document is not None and app.document.title == "Volcanoes"
                    and app.chunk is not None, "the jump to Volcanoes")
        assert titles(app) == [title for title, _ in PAPERS]
