"""Edits cost what changed: only chunks whose embedded text changed go to the encoder (docs/ingester.md).

One world, in process: a long markdown file ingested, one paragraph in its
middle edited, the edited file ingested afresh into a second database, the edit
reverted. Texts are counted where they reach the encoder.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ingester_support import EncoderCount, fs_source, write_ingester_config

from haiku.core.config import load_config
from haiku.core.embedders import EmbedderIdentity
from haiku.core.scope import DatabaseRef
from haiku.ingester.checks import ingested_refs
from support import copy_database

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

OLD_SENTENCE = "The old harbour bell was recast in bronze during the winter of 1887."
NEW_SENTENCE = "The lighthouse keeper catalogued seventeen migrating albatrosses at dawn."
ANIMALS = ["otter", "heron", "badger", "lynx", "marten", "curlew", "stoat", "plover", "vole", "kestrel", "ibex"]
PLANTS = ["sedge", "alder", "bracken", "heather", "rowan", "yarrow", "sorrel"]
PLACES = ["estuary", "moorland", "quarry", "orchard", "saltmarsh", "ridge", "meadow", "fen", "scree"]
SECTIONS = 30
EDITED_SECTION = SECTIONS // 2


def paragraph(section: int, number: int) -> str:
    if (section, number) == (EDITED_SECTION, 1):
        return OLD_SENTENCE
    animal = ANIMALS[(section + number) % len(ANIMALS)]
    plant = PLANTS[(section * 3 + number) % len(PLANTS)]
    place = PLACES[(section + 2 * number) % len(PLACES)]
    return (
        f"Survey {section}.{number} found a {animal} among the {plant} by the {place}. "
        f"Observers noted its tracks on {number + 2} mornings of week {section}."
    )


def long_markdown() -> str:
    parts = ["# Field survey"]
    for section in range(SECTIONS):
        parts.append(f"## Site {section}")
        parts.extend(paragraph(section, number) for number in range(3))
    return "\n\n".join(parts) + "\n"


@dataclass
class EditWorld:
    config: Any
    file: Path
    embedded: dict[str, int] = field(default_factory=dict)
    reports: dict[str, Any] = field(default_factory=dict)
    chunks: dict[str, list] = field(default_factory=dict)  # (text, vector) per chunk, in order
    found: dict[str, list[str]] = field(default_factory=dict)
    status: dict[str, Any] = field(default_factory=dict)


async def stored_chunks(config: Any, name: str) -> list[tuple[str, list[float]]]:
    from haiku.core.convert import embed_text
    from haiku.core.store import Store

    store = await Store.open(ingested_refs(config, [name])[name], config, read_only=True)
    try:
        [document] = await store.reads.list_documents()
        return [(embed_text(c.headings, c.content), c.vector) for c in await store.reads.get_chunks(document.id, with_vectors=True)]
    finally:
        await store.close()


async def search_texts(config: Any, name: str, query: str, embedder: Any) -> list[str]:
    from haiku.core.store import Store

    vector = await embedder.embed_query(query)
    store = await Store.open(ingested_refs(config, [name])[name], config, read_only=True)
    try:
        return [r.content for r in await store.search(query, query_vector=vector, limit=3)]
    finally:
        await store.close()


@pytest.fixture(scope="module")
async def edit_world(tmp_path_factory, embedder) -> EditWorld:
    from haiku.ingester import collect_status, run_batch

    root = tmp_path_factory.mktemp("reuse")
    folder, fresh_folder = root / "notes", root / "fresh"
    folder.mkdir()
    fresh_folder.mkdir()
    path = write_ingester_config(
        root / "cfg.yaml",
        data_dir=root / "data",
        databases={"notes": root / "notes.lancedb", "fresh": root / "fresh.lancedb"},
        ingested={"notes": [fs_source(folder)], "fresh": [fs_source(fresh_folder)]},
        processing={"chunk_size": 64},  # short chunks: a long document that embeds quickly
    )
    config = load_config(path)
    world = EditWorld(config=config, file=folder / "survey.md")
    original = long_markdown()

    async def ingest(label: str, database: str) -> None:
        with EncoderCount(embedder) as count:
            world.reports[label] = await run_batch(config, database, progress=False)
        world.embedded[label] = count.texts
        world.chunks[label] = await stored_chunks(config, database)

    world.file.write_text(original)
    await ingest("first", "notes")
    world.file.write_text(original.replace(OLD_SENTENCE, NEW_SENTENCE))
    await ingest("edit", "notes")
    world.found["new"] = await search_texts(config, "notes", "lighthouse keeper albatrosses", embedder)
    world.found["old"] = await search_texts(config, "notes", "harbour bell recast in bronze", embedder)
    world.status["edit"] = collect_status(config, "notes")["databases"][0]["written"]
    shutil.copy(world.file, fresh_folder / "survey.md")
    await ingest("fresh", "fresh")
    world.file.write_text(original)
    await ingest("revert", "notes")
    return world


def test_the_long_document_has_many_chunks_all_embedded_on_first_ingest(edit_world):
    chunks = len(edit_world.chunks["first"])
    assert chunks >= 40 and edit_world.embedded["first"] == chunks


def test_an_edit_in_the_middle_of_a_long_document_sends_at_most_three_texts_to_the_encoder(edit_world):
    assert 1 <= edit_world.embedded["edit"] <= 3


def test_search_after_the_edit_finds_the_new_sentence_and_not_the_old_one(edit_world):
    assert NEW_SENTENCE in edit_world.found["new"][0]
    assert not any("harbour bell" in text for text in edit_world.found["old"])


def _largest_difference(chunks, others) -> float:
    """The largest vector difference between two versions holding the same chunk texts, in order."""
    assert [text for text, _ in chunks] == [text for text, _ in others]
    return float(np.abs(np.array([v for _, v in chunks]) - np.array([v for _, v in others])).max())


def test_vectors_after_an_edit_equal_a_fresh_ingest_of_the_edited_file(edit_world):
    assert _largest_difference(edit_world.chunks["edit"], edit_world.chunks["fresh"]) <= 1e-6


def test_another_database_reuses_nothing_from_the_first(edit_world):
    assert edit_world.embedded["fresh"] == len(edit_world.chunks["fresh"])


def test_a_reverted_edit_embeds_only_the_chunks_the_edited_version_lacks(edit_world):
    edited = {text for text, _ in edit_world.chunks["edit"]}
    lacking = [text for text, _ in edit_world.chunks["revert"] if text not in edited]
    assert 1 <= len(lacking) <= 3 and edit_world.embedded["revert"] == len(lacking)


def test_a_reverted_edit_brings_back_the_original_vectors(edit_world):
    assert _largest_difference(edit_world.chunks["first"], edit_world.chunks["revert"]) <= 1e-6


def test_the_batch_report_counts_embedded_and_reused_chunks(edit_world):
    report, chunks = edit_world.reports["edit"], len(edit_world.chunks["edit"])
    assert (report.chunks, report.embedded, report.reused) == (
        chunks, edit_world.embedded["edit"], chunks - edit_world.embedded["edit"]
    )


def test_status_totals_what_the_run_wrote(edit_world):
    written, chunks = edit_world.status["edit"], len(edit_world.chunks["edit"])
    embedded = edit_world.embedded["edit"]
    assert {k: written[k] for k in ("documents", "chunks", "embedded", "reused")} == {
        "documents": 1, "chunks": chunks, "embedded": embedded, "reused": chunks - embedded
    }


async def test_a_changed_embedder_identity_embeds_every_chunk(edit_world, embedder, tmp_path):
    """The guard itself: a store whose recorded model is not the one embedding lends no vector."""
    from haiku.core.store import Store
    from haiku.ingester.pipeline.embed import EmbedBatcher
    from haiku.ingester.pipeline.pool import ConversionPool
    from haiku.ingester.pipeline.process import JobProcessor
    from haiku.ingester.queue import IngestQueue, Job
    from haiku.ingester.sources.fs import FolderSource

    class Renamed:
        """The session's encoder under another model's identity (same weights, as after a config change)."""

        identity = EmbedderIdentity("sentence-transformers", "another-model", 384)
        batch_size = embedder.batch_size

        def __init__(self) -> None:
            self.texts = 0

        def encode(self, texts):
            self.texts += len(texts)
            return embedder.encode(texts)

    config = edit_world.config
    location = copy_database(ingested_refs(config, ["notes"])["notes"].location, tmp_path / "notes.lancedb")
    queue_path = tmp_path / "ingester.db"
    shutil.copy(config.queue_path, queue_path)
    edit_world.file.write_text(long_markdown().replace(OLD_SENTENCE, NEW_SENTENCE))
    renamed = Renamed()
    from haiku.core.convert.files import tokenizer_dir

    pool = ConversionPool(size=1, tokenizer_dir=tokenizer_dir(config), chunk_size=64, timeout_s=120)
    queue = IngestQueue(queue_path)
    store = await Store.open(DatabaseRef.configured("notes", location), config, skip_validation=True)
    processor = JobProcessor(sync=queue.sync, pool=pool, batcher=EmbedBatcher(renamed, pool_size=64))
    try:
        await pool.start()
        [source_config] = config.ingester.databases["notes"].sources
        source = FolderSource("notes", source_config, config.ingester.workers.retry)
        job = Job(1, "notes", source.id, source.uri_for(edit_world.file.resolve()), "upsert", None, "claimed", 1, "t", None)
        outcome = await processor.run(job, source, store)
    finally:
        await processor.close()
        await pool.close()
        await store.close()
        queue.close()
    assert (outcome.embedded, outcome.reused, renamed.texts) == (outcome.chunks, 0, outcome.chunks)
