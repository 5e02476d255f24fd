"""File names that are not UTF-8 are ingested, titled from the name with U+FFFD (docs/ingester.md, "File names")."""

from __future__ import annotations

import json
import os

import pytest
from ingester_support import chunk_document_ids, fs_source, run_cli, snapshot, write_ingester_config

from haiku.core.config import AppConfig
from haiku.core.convert.titles import readable_name
from haiku.core.models import Chunk, Document
from haiku.core.scope import DatabaseRef
from haiku.core.store import Store
from haiku.ingester.retry import retry_delay

CAFE = os.fsdecode(b"caf\xe9.md")  # Latin-1 bytes: not UTF-8


def test_a_name_that_is_not_utf8_reads_with_a_replacement_character():
    assert readable_name(CAFE) == "caf\ufffd.md"


def test_a_unicode_error_is_permanent_on_the_first_attempt():
    from haiku.core.config import RetryConfig

    error = UnicodeEncodeError("utf-8", CAFE, 3, 4, "surrogates not allowed")
    assert retry_delay(RetryConfig(max_attempts=5), 1, error) is None


async def test_a_write_failing_on_text_that_is_not_utf8_leaves_no_chunk_behind(tmp_path):
    location = tmp_path / "db.lancedb"
    store = await Store.open(DatabaseRef.configured("db", location), AppConfig(), create=True)
    try:
        document = Document(uri="file:///docs/caf%E9.md", title=CAFE, content="plain text about coffee")
        with pytest.raises(UnicodeEncodeError):
            await store.writer().documents.upsert_documents([(document, [Chunk(order=0, content="plain text")], [[0.1] * 384])])
    finally:
        await store.close()
    assert await chunk_document_ids(location) == []


@pytest.mark.slow
async def test_a_file_named_in_latin1_without_a_heading_is_ingested_titled_from_its_name(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    with open(os.fsencode(folder) + b"/caf\xe9.md", "wb") as handle:
        handle.write(b"plain text without a heading, about coffee.\n")
    config = write_ingester_config(
        tmp_path / "cfg.yaml",
        data_dir=tmp_path / "data",
        databases={"docs": tmp_path / "docs.lancedb"},
        ingested={"docs": [fs_source(folder, id="docs-folder")]},
    )
    run = run_cli(["run-batch", "--json"], config=config)
    report = json.loads(run.stdout)
    assert (run.returncode, report["jobs"]["dead"], report["jobs"]["retried"]) == (0, 0, 0), run.stderr[-2000:]
    documents = await snapshot(tmp_path / "docs.lancedb", "docs")
    assert [(uri.rsplit("/", 1)[-1], doc.title) for uri, doc in documents.items()] == [("caf%E9.md", "caf\ufffd.md")]
