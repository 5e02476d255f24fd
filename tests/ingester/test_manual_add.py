"""Adding documents by hand from Python (docs/ingester.md, "Adding documents"): real files of several
formats, a real loopback web server, a real LanceDB database, the real pipeline and model.

One world runs the writer a few times (each run loads the model) and records what it
returned and what the databases held; each test reads one behaviour from the record.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from ingester_support import fs_source, write_files, write_ingester_config
from manual_support import Page, Site, serve_site

from haiku.core.config import load_config
from haiku.ingester import Ingester, collect_status
from haiku.ingester.batch import run_batch
from haiku.ingester.manual import AddRefusedError, DeleteRefusedError

HERONS = "<html><head><title>Herons</title></head><body><h1>Herons</h1><p>Herons wait in shallows.</p></body></html>"


@dataclass
class World:
    root: Path
    results: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, Exception] = field(default_factory=dict)
    documents: dict[str, dict[str, Any]] = field(
        default_factory=dict
    )  # stage -> {uri: (id, title, source, meta)}
    requests: list[tuple[str, str | None, int]] = field(default_factory=list)


async def _documents(config: Any, name: str) -> dict[str, Any]:
    from haiku.core.scope import DatabaseScope
    from haiku.core.store import Store

    ref = DatabaseScope.resolve(config, database_name=name).databases[0]
    async with await Store.open(ref, config, read_only=True) as store:
        docs = await store.reads.list_documents()
        orphans = await store.reads.count_orphan_chunks()
    return {
        "orphans": orphans,
        **{d.uri: (d.id, d.title, d.metadata.get("source_id"), d.metadata) for d in docs},
    }


async def _refused(world: World, key: str, call: Any) -> None:
    try:
        await call
    except (AddRefusedError, DeleteRefusedError) as exc:
        world.errors[key] = exc


@pytest.fixture(scope="module")
async def world(tmp_path_factory) -> World:
    root = tmp_path_factory.mktemp("manual")
    world = World(root)
    outside, synced = root / "outside", root / "synced"
    write_files(outside, {
        "notes.md": "# Field notes\n\nThe heron waits in the shallows.\n",
        "kestrels.txt": "Kestrels hover above the fields.\n",
        "owls.html": "<html><body><h1>Owls</h1><p>Owls hunt at night.</p></body></html>",
        "counts.csv": "bird,count\nheron,3\nowl,5\n",
    })  # fmt: skip
    write_files(synced, {"synced.md": "# Synced\n\nA file a source syncs.\n"})
    site = Site(pages={"/herons.html": Page(HERONS.encode(), etag='"v1"')})
    server, url = serve_site(site)
    databases = {"papers": root / "papers.lancedb", "scratch": root / "scratch.lancedb"}
    config_path = write_ingester_config(
        root / "one.yaml", data_dir=root / "data", databases=databases,
        ingested={"papers": [fs_source(synced, id="synced")]},
    )  # fmt: skip
    config = load_config(config_path)
    config.ingester.allow_private_urls = True  # the test's web server is on loopback
    files = [str(outside / n) for n in ("notes.md", "kestrels.txt", "owls.html", "counts.csv")]
    try:
        async with Ingester(config) as ing:
            world.results["first"] = await ing.add_many(files, database="papers", metadata={"team": "birds"})
            world.results["again"] = await ing.add_many(files[:1], database="papers")
            later = (outside / "owls.html").stat().st_mtime + 60
            os.utime(outside / "owls.html", (later, later))  # a new revision of the same bytes
            world.results["touched"] = await ing.add(files[2], database="papers")
            (outside / "kestrels.txt").write_text("Kestrels hover, then dive.\n")
            world.results["edited"] = await ing.add(files[1], database="papers", title="Kestrels")
            world.results["retitled"] = await ing.add(files[0], database="papers", title="Renamed notes")
            await _refused(world, "synced", ing.add(synced / "synced.md", database="papers"))
            world.results["text"] = await ing.add_text(
                "# Notes\n\nFirst draft.\n", database="papers", title="Release notes"
            )
            world.results["text2"] = await ing.add_text(
                "# Notes\n\nFinal text.\n", database="papers", title="Release notes"
            )
            world.results["url"] = await ing.add(url("/herons.html"), database="papers")
            world.results["refresh"] = await ing.refresh(database="papers")
            world.results["scratch"] = await ing.add(files[0], database="scratch")
            world.documents["added"] = await _documents(config, "papers")
            world.results["deleted"] = await ing.delete(world.results["text2"].document_id, database="papers")
            await _refused(world, "unknown", ing.delete("no-such-document", database="papers"))
        world.documents["after delete"] = await _documents(config, "papers")
        world.requests = list(site.requests)
        world.results["spool"] = sorted(
            p.name for p in (root / "data" / "ingester-added").rglob("*") if p.is_file()
        )
        # A source root added later covers notes.md: the source takes the document over, with its id.
        taken = write_ingester_config(
            root / "two.yaml", data_dir=root / "data", databases=databases,
            ingested={"papers": [fs_source(synced, id="synced"), fs_source(outside, id="field")]},
        )  # fmt: skip
        config2 = load_config(taken)
        world.results["batch"] = await run_batch(config2, "papers", progress=False)
        world.documents["taken over"] = await _documents(config2, "papers")
        async with Ingester(config2) as ing:
            await _refused(world, "delete synced", ing.delete(str(outside / "notes.md"), database="papers"))
        world.results["status"] = collect_status(config2, "papers", probe=False)
    finally:
        server.close()
    return world


def test_files_of_several_formats_are_added_with_the_metadata_given(world):
    first = world.results["first"]
    assert [r.outcome for r in first] == ["added"] * 4
    assert all(r.chunks >= 1 and r.uri.startswith("file://") for r in first)
    notes = world.documents["added"][first[0].uri]
    assert notes[2] == "manual" and notes[3]["team"] == "birds"


def test_the_same_unchanged_file_again_does_nothing(world):
    [again] = world.results["again"]
    assert (again.outcome, again.document_id) == ("unchanged", world.results["first"][0].document_id)


def test_a_touched_file_keeps_its_document_and_the_metadata_given_before(world):
    touched = world.results["touched"]
    assert touched.document_id == world.results["first"][2].document_id
    assert world.documents["added"][touched.uri][3]["team"] == "birds"


def test_a_changed_file_updates_its_document_under_the_same_id_and_title_given(world):
    edited = world.results["edited"]
    assert (edited.outcome, edited.document_id) == ("updated", world.results["first"][1].document_id)
    assert world.documents["added"][edited.uri][1] == "Kestrels"


def test_a_file_under_a_source_root_is_refused_naming_the_source(world):
    assert "source synced" in str(world.errors["synced"]) and "syncs it already" in str(
        world.errors["synced"]
    )


def test_a_text_has_a_text_uri_and_the_same_identity_updates_it(world):
    text, text2 = world.results["text"], world.results["text2"]
    assert text.uri == "text://papers/release-notes" and text.outcome == "added"
    assert (text2.outcome, text2.document_id) == ("updated", text.document_id)
    assert world.documents["added"][text.uri][1] == "Release notes"


def test_a_url_is_added_and_a_refresh_of_an_unchanged_page_costs_one_conditional_request(world):
    assert world.results["url"].outcome == "added"
    [refreshed] = world.results["refresh"]
    assert (refreshed.outcome, refreshed.document_id) == ("unchanged", world.results["url"].document_id)
    assert [(status, etag) for _, etag, status in world.requests] == [(200, None), (304, '"v1"')]


def test_a_database_fed_only_by_add_needs_no_ingester_entry(world):
    assert world.results["scratch"].outcome == "added"


def test_delete_removes_a_document_added_by_hand_and_refuses_an_unknown_one(world):
    assert world.results["deleted"].outcome == "deleted"
    assert world.results["text2"].uri not in world.documents["after delete"]
    assert isinstance(world.errors["unknown"], DeleteRefusedError)
    assert "holds no document" in str(world.errors["unknown"])


def test_nothing_is_kept_of_texts_and_pages_once_their_jobs_ended(world):
    assert set(world.results["spool"]) <= {"fields.json", ".lock"}


def test_a_source_root_added_later_takes_the_document_over_with_its_id(world):
    uri = world.results["first"][0].uri
    assert world.documents["taken over"][uri][0] == world.results["first"][0].document_id
    assert world.documents["taken over"][uri][2] == "field"
    assert world.documents["taken over"]["orphans"] == 0


def test_delete_refuses_a_sources_document_naming_the_source(world):
    assert isinstance(world.errors["delete synced"], DeleteRefusedError)
    assert "belongs to source field" in str(world.errors["delete synced"])


def test_status_counts_each_sources_documents_with_those_added_by_hand_under_manual(world):
    [database] = world.results["status"]["databases"]
    counts = {source["id"]: source["documents"] for source in database["sources"]}
    assert counts == {"synced": 1, "field": 4, "manual": 1}  # the field folder took its four files over


def test_a_new_title_on_unchanged_content_is_written_keeping_the_metadata_given_before(world):
    retitled = world.results["retitled"]
    assert (retitled.outcome, retitled.document_id) == ("updated", world.results["first"][0].document_id)
    _id, title, _source, metadata = world.documents["added"][retitled.uri]
    assert (title, metadata["team"]) == ("Renamed notes", "birds")
