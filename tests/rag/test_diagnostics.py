"""What doctor, info, history and init-config compute, through the client (docs/cli.md)."""

from __future__ import annotations

import dataclasses
from datetime import datetime

import pytest
import yaml
from rag_support import build_config

from haiku.core.config import load_config
from haiku.core.embedders import EmbedderIdentity
from haiku.core.scope import DatabaseRef, DatabaseScope
from haiku.rag.client import (
    Check,
    DatabaseInfo,
    HaikuRAG,
    History,
    doctor,
    example_config,
    write_example_config,
)
from haiku.rag.client._diagnostics import identity_check
from support import copy_database

MINILM = EmbedderIdentity("sentence-transformers", "all-MiniLM-L6-v2", 384)


async def test_doctor_over_a_set_returns_checks_naming_each_database_and_the_shared_embedder(two_db):
    checks = await doctor(two_db, DatabaseScope.resolve(two_db), skip_providers=True)
    assert all(isinstance(c, Check) for c in checks)
    assert checks[0].name == "config" and checks[0].database is None
    assert {(c.database, c.status) for c in checks if c.name == "database"} == {("papers", "ok"), ("wiki", "ok")}
    assert {(c.database, c.status) for c in checks if c.name == "orphan chunks"} == {("papers", "ok"), ("wiki", "ok")}
    assert [c.status for c in checks if c.name == "embedders across databases"] == ["ok"]
    assert not any(c.name in {"embedding model", "qa model"} for c in checks)


async def test_doctor_fails_a_missing_database_with_the_command_that_creates_it(tmp_path):
    config = build_config(tmp_path / "data", {"gone": str(tmp_path / "gone.lancedb")})
    checks = await doctor(config, DatabaseScope.resolve(config), skip_providers=True)
    assert [(c.name, c.status) for c in checks] == [("config", "ok"), ("database", "fail")]
    assert "--db-name gone init" in checks[1].detail


async def test_doctor_before_the_first_ingest_says_the_ingester_creates_the_database_and_compares_nothing(tmp_path):
    config = build_config(
        tmp_path / "data",
        {"inbox": str(tmp_path / "inbox.lancedb"), "outbox": str(tmp_path / "outbox.lancedb")},
        ingester={"databases": {"inbox": {"sources": [{"root": str(tmp_path)}]}}},
    )
    checks = await doctor(config, DatabaseScope.resolve(config), skip_providers=True)
    by_name = {(c.name, c.database): c for c in checks}
    inbox, outbox = by_name[("database", "inbox")], by_name[("database", "outbox")]
    shared = by_name[("embedders across databases", None)]
    assert (inbox.status, "haiku-ingester creates it on its first run" in inbox.detail) == ("warn", True)
    assert (outbox.status, "once ingester.databases names it" in outbox.detail) == ("fail", True)
    assert (shared.status, shared.detail) == ("warn", "not checked: 0 of 2 databases opened with an embedder recorded")


async def test_doctor_names_the_question_answering_url_it_tried(tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    config = build_config(tmp_path / "data", qa={"model": {"name": "scripted", "base_url": url}})
    checks = await doctor(config, DatabaseScope.resolve(config), skip_providers=False)
    (qa,) = [c for c in checks if c.name == "qa model"]
    assert (qa.status, qa.detail.startswith(f"{url}/models did not answer (")) == ("warn", True), qa.detail


def test_identity_check_fails_another_dimension_warns_another_model_and_passes_the_same():
    other_dim = identity_check(EmbedderIdentity("sentence-transformers", "all-MiniLM-L6-v2", 512), MINILM, "wiki")
    assert other_dim.status == "fail" and "database 'wiki'" in other_dim.detail and "rebuild" in other_dim.detail
    other_model = identity_check(EmbedderIdentity("sentence-transformers", "other", 384), MINILM, "wiki")
    assert other_model.status == "warn" and other_model.detail.endswith("reads work, writes are refused")
    assert identity_check(MINILM, MINILM, "wiki") == Check("embedder", "ok", MINILM.describe())
    assert identity_check(None, MINILM, "wiki").status == "warn"


async def test_client_info_is_a_typed_report_with_the_configured_location_and_package_versions(two_db, built):
    async with HaikuRAG(config=two_db, sources=["papers"], read_only=True) as client:
        info = await client.database().info()
    assert isinstance(info, DatabaseInfo)
    assert (info.name, info.documents, info.configured_location) == ("papers", 3, str(built["papers"]))
    assert "haiku-core" in info.packages
    assert info.as_dict()["fts_index"] == info.fts_index


async def test_client_info_is_the_store_report_plus_where_it_is_configured(two_db):
    from haiku.core.store import StoreInfo

    async with HaikuRAG(config=two_db, sources=["papers"], read_only=True) as client:
        info = await client.database().info()
        report = await client.store.report.info()
    # Each field is declared once: the client's report is the store's, with two more.
    assert isinstance(info, StoreInfo)
    added = {f.name for f in dataclasses.fields(DatabaseInfo)} - {f.name for f in dataclasses.fields(StoreInfo)}
    assert added == {"configured_location", "packages"}
    assert {k: v for k, v in info.as_dict().items() if k not in added} == report.as_dict()


async def test_info_json_the_info_lines_and_the_inspector_show_the_recorded_processing(built, tmp_path, capsys):
    from haiku.core.store import Store
    from haiku.rag.apps.inspector.catalog import DatabaseReport
    from haiku.rag.apps.inspector.render import report_text
    from haiku.rag.cli.database_commands import _print_info

    path = copy_database(built["papers"], tmp_path / "papers.lancedb")
    recorded = {"processing.chunk_size": 128, "processing.ocr": "auto", "converter.rules": 3, "formats.md": "md"}
    store = await Store.open(DatabaseRef.configured("papers", path), build_config(tmp_path / "data"))
    try:
        await store.writer().processing.record(recorded)
    finally:
        await store.close()
    async with HaikuRAG(db_path=path, config=build_config(tmp_path / "data"), read_only=True) as client:
        info = await client.database().info()
    _print_info(info)
    described = "chunk_size 128, ocr auto, conversion rules 3"
    panel = [" ".join(line.split()) for line in report_text(DatabaseReport(info, [])).plain.splitlines()]
    assert (
        info.as_dict()["processing"],
        f"processing: {described}" in capsys.readouterr().out.splitlines(),
        f"processing {described}" in panel,
    ) == (recorded, True, True), panel


async def test_info_of_a_database_with_documents_and_no_processing_record_says_so(two_db, capsys):
    from haiku.rag.apps.inspector.catalog import DatabaseReport
    from haiku.rag.apps.inspector.render import report_text
    from haiku.rag.cli.database_commands import _print_info

    async with HaikuRAG(config=two_db, sources=["papers"], read_only=True) as client:
        info = await client.database().info()
    _print_info(info)
    said = "not recorded (written by an older haiku-ingester; `haiku-ingester reprocess` records it)"
    panel = [" ".join(line.split()) for line in report_text(DatabaseReport(info, [])).plain.splitlines()]
    assert (
        info.as_dict()["processing"],
        f"processing: {said}" in capsys.readouterr().out.splitlines(),
        f"processing {said}" in panel,
    ) == (None, True, True), panel


async def test_client_history_returns_the_notices_with_the_versions(built, tmp_path):
    path = copy_database(built["papers"], tmp_path / "papers.lancedb")
    async with HaikuRAG(db_path=path, config=build_config(tmp_path / "data")) as client:
        await client.database().create_tag("r1")
    # A tag file that cannot be parsed: the history comes back without tags, and says so.
    (tag_file,) = (path / "chunks.lance" / "_refs" / "tags").glob("*.json")
    tag_file.write_text("{not json", encoding="utf-8")
    async with HaikuRAG(db_path=path, config=build_config(tmp_path / "data"), read_only=True) as client:
        history = await client.database().history(table="chunks")
    assert isinstance(history, History)
    assert list(history.tables) == ["chunks"] and isinstance(history.tables["chunks"][0].timestamp, datetime)
    assert len(history.notices) == 1 and "tags of table chunks could not be read" in history.notices[0]
    assert history.as_dict()["chunks"][0]["tags"] == []


async def test_store_counts_orphan_chunks_as_no_reader_shows_them(built, tmp_path):
    from haiku.core.store import Store

    path = copy_database(built["papers"], tmp_path / "papers.lancedb")
    store = await Store.open(DatabaseRef.at(path), build_config(tmp_path / "data"), skip_validation=True)
    try:
        assert await store.reads.count_orphan_chunks() == 0
        (document, *_) = await store.reads.list_documents()
        chunks = await store.reads.count_chunks()
        await store.table("documents").delete(f"id = '{document.id}'")
        orphans = await store.reads.count_orphan_chunks()
        assert orphans > 0 and await store.reads.count_chunks() == chunks
        shown = [len(await store.reads.get_chunks(d.id)) for d in await store.reads.list_documents()]
        assert orphans == chunks - sum(shown)
    finally:
        await store.close()


def test_example_config_is_the_file_configs_links_to_and_loads(repo_root):
    shipped = example_config()
    assert shipped == (repo_root / "configs" / "haiku.rag.example.yaml").read_text(encoding="utf-8")
    assert yaml.safe_load(shipped)["lancedb"]["databases"]


class _StrictLoader(yaml.SafeLoader):
    """A YAML loader that refuses a key given twice in one mapping (PyYAML keeps the last silently)."""

    def construct_mapping(self, node, deep=False):
        seen: set = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def test_example_config_gives_no_key_twice(tmp_path):
    write_example_config(tmp_path / "haiku.rag.yaml")
    assert yaml.load((tmp_path / "haiku.rag.yaml").read_text(encoding="utf-8"), Loader=_StrictLoader)["processing"]


def test_write_example_config_writes_it_once_and_never_over_a_file(tmp_path):
    target = tmp_path / "sub" / "haiku.rag.yaml"
    write_example_config(target)
    assert target.read_text(encoding="utf-8") == example_config()
    assert load_config(target).embeddings.model.vector_dim == 384
    target.write_text("mine", encoding="utf-8")
    with pytest.raises(FileExistsError, match="already exists"):
        write_example_config(target)
    assert target.read_text(encoding="utf-8") == "mine"
