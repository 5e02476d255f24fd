"""Re-processing after the processing settings changed (docs/ingester.md, "Re-processing").

One world: a folder ingested with ``chunk_size: 128`` (the identity recorded),
the configuration changed to 64; ``run-batch``, ``serve``, ``status`` and
``haiku-rag doctor`` then say so; one file is deleted and the database is
re-processed in process, counting the texts that reach the encoder. A copy of
the database is re-processed by a ``reprocess`` killed after its first
document, then run again.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from ingester_support import (
    CliResult,
    EncoderCount,
    ServeProcess,
    fs_source,
    queue_rows,
    run_cli,
    write_files,
    write_ingester_config,
)

from haiku.core.config import load_config
from haiku.core.convert import embed_text
from haiku.core.processing_identity import processing_identity
from haiku.ingester.checks import ingested_refs
from support import cli_env, copy_database, write_config

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

HAIKU_RAG = str(Path(sys.executable).parent / "haiku-rag")
ANIMALS = ["otter", "heron", "badger", "lynx", "marten", "curlew", "stoat", "plover", "vole", "kestrel"]


def long_markdown(title: str, sections: int) -> str:
    parts = [f"# {title}"]
    for section in range(sections):
        parts.append(f"## Site {section}")
        for number in range(3):
            animal = ANIMALS[(section + number) % len(ANIMALS)]
            parts.append(
                f"Survey {section}.{number} of {title} found a {animal} by the river. "
                f"Observers noted its tracks on {number + 2} mornings of week {section}."
            )
    return "\n\n".join(parts) + "\n"


FILES = {
    "survey.md": long_markdown("Field survey", 8),
    "census.md": long_markdown("Bird census", 6),
    "walks.md": long_markdown("Coastal walks", 5),
    "short.md": "# Wren\n\nA wren sang once.\n",  # one chunk at either size: its vector is reused
    "gone.md": long_markdown("Lost notes", 3),
}

# Runs `haiku-ingester ARGS`, SIGKILLing itself as a second forced job is about to be acknowledged.
_KILLED_AFTER_FIRST_DOCUMENT = """
import os, signal, sys
from haiku.ingester.queue import jobs

_complete = jobs.JobQueue.complete
_done = []

def complete(self, job, *args, **kwargs):
    if job.forced and _done:
        os.kill(os.getpid(), signal.SIGKILL)
    _done.append(job.id)
    return _complete(self, job, *args, **kwargs)

jobs.JobQueue.complete = complete
from haiku.ingester.cli import main
sys.argv = ["haiku-ingester", *sys.argv[1:]]
main()
"""


@dataclass
class ReprocessWorld:
    folder: Path
    config_path: Path
    config: Any
    runs: dict[str, CliResult] = field(default_factory=dict)
    chunks: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # label -> uri -> embedded texts
    recorded: dict[str, Any] = field(default_factory=dict)
    facts: dict[str, Any] = field(default_factory=dict)

    def uri(self, name: str) -> str:
        return (self.folder / name).resolve().as_uri()


async def database_state(config: Any, name: str = "notes") -> tuple[dict[str, list[str]], dict[str, Any] | None]:
    """uri -> the embedded text of each chunk; and the processing identity the database records."""
    from haiku.core.store import Store

    store = await Store.open(ingested_refs(config, [name])[name], config, read_only=True)
    try:
        texts = {
            document.uri: [embed_text(c.headings, c.content) for c in await store.reads.get_chunks(document.id)]
            for document in await store.reads.list_documents()
        }
        return texts, store.processing_identity
    finally:
        await store.close()


def with_chunk_size(path: Path, size: int, **changes: Any) -> Path:
    raw = yaml.safe_load(path.read_text())
    raw["processing"] = {"chunk_size": size}
    raw.update(changes)
    return write_config(path, raw)


def doctor(config_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [HAIKU_RAG, "--config", str(config_path), "doctor", "--skip-providers"],
        capture_output=True, text=True, timeout=180, env=cli_env(),
    )


def warnings_of(stderr: str) -> list[dict[str, Any]]:
    events = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    return [e for e in events if e.get("level") == "warning"]


@pytest.fixture(scope="module")
async def world(tmp_path_factory, embedder) -> ReprocessWorld:
    from haiku.ingester.reprocess import reprocess

    root = tmp_path_factory.mktemp("reprocess")
    folder = root / "notes"
    write_files(folder, FILES)
    config_path = write_ingester_config(
        root / "cfg.yaml",
        data_dir=root / "data",
        databases={"notes": root / "notes.lancedb"},
        ingested={"notes": [fs_source(folder, id="notes")]},
        processing={"chunk_size": 128},
    )
    world = ReprocessWorld(folder=folder, config_path=config_path, config=load_config(config_path))
    world.runs["first"] = run_cli(["run-batch"], config=config_path)
    world.chunks["first"], world.recorded["first"] = await database_state(world.config)

    with_chunk_size(config_path, 64)
    world.config = load_config(config_path)
    world.runs["changed"] = run_cli(["run-batch"], config=config_path)
    world.runs["status"] = run_cli(["status", "--db-name", "notes"], config=config_path)
    world.runs["status_json"] = run_cli(["status", "--db-name", "notes", "--json"], config=config_path)
    world.facts["doctor"] = doctor(config_path)
    serve = ServeProcess(config_path, root, name="serve")
    try:
        world.facts["serve_ready"] = serve.wait_for_message("READY=1", timeout=240)
    finally:
        serve.stop()
    world.facts["serve_log"] = serve.log_text()

    # A copy for the killed run, with its own queue, taken before anything is re-processed.
    copy = copy_database(root / "notes.lancedb", root / "copy.lancedb")
    copy_config = root / "copy.yaml"
    raw = yaml.safe_load(config_path.read_text())
    raw["storage"]["data_dir"] = str(root / "copy-data")
    raw["lancedb"]["databases"] = {"notes": str(copy)}
    write_config(copy_config, raw)

    (folder / "gone.md").unlink()
    with EncoderCount(embedder) as count:
        world.facts["report"] = await reprocess(world.config, "notes", progress=False)
    world.facts["embedded"] = count.texts
    world.chunks["after"], world.recorded["after"] = await database_state(world.config)
    world.runs["status_after"] = run_cli(["status", "--db-name", "notes", "--json"], config=config_path)
    world.facts["doctor_after"] = doctor(config_path)
    with EncoderCount(embedder) as count:
        world.facts["again"] = await reprocess(world.config, "notes", progress=False)
    world.facts["embedded_again"] = count.texts

    world.facts["killed"] = subprocess.run(
        [sys.executable, "-c", _KILLED_AFTER_FIRST_DOCUMENT, "--config", str(copy_config), "reprocess", "--db-name", "notes"],
        capture_output=True, text=True, timeout=300, env=cli_env(),
    )
    copy_loaded = load_config(copy_config)
    world.chunks["killed"], world.recorded["killed"] = await database_state(copy_loaded)
    world.runs["status_killed"] = run_cli(["status", "--db-name", "notes", "--json"], config=copy_config)
    world.facts["forced_left"] = queue_rows(
        root / "copy-data" / "ingester.db", "SELECT COUNT(*) FROM jobs WHERE forced = 1 AND status IN ('queued', 'claimed')"
    )[0][0]
    world.runs["resumed"] = run_cli(["reprocess", "--db-name", "notes", "--json"], config=copy_config)
    world.chunks["resumed"], world.recorded["resumed"] = await database_state(copy_loaded)
    return world


# --- the identity is recorded, and a change is noticed -----------------------------------------


def test_the_first_run_records_the_configured_identity_without_a_warning(world):
    assert world.runs["first"].returncode == 0, world.runs["first"].stderr
    assert world.recorded["first"]["processing.chunk_size"] == 128
    assert not [w for w in warnings_of(world.runs["first"].stderr) if "processed" in w["event"]]


def test_run_batch_after_a_chunk_size_change_warns_once_naming_the_key_and_the_database(world):
    found = [w for w in warnings_of(world.runs["changed"].stderr) if "processing.chunk_size" in w["event"]]
    assert len(found) == 1, world.runs["changed"].stderr
    assert "database 'notes'" in found[0]["event"] and "processing.chunk_size 128 -> 64" in found[0]["event"]
    assert found[0]["changed"] == ["processing.chunk_size"]


def test_run_batch_does_not_re_chunk_unchanged_files_by_itself(world):
    assert world.runs["changed"].returncode == 0
    assert "0 succeeded" in world.runs["changed"].stdout


def test_serve_warns_once_too(world):
    assert world.facts["serve_ready"]
    lines = [line for line in world.facts["serve_log"].splitlines() if "processing.chunk_size 128 -> 64" in line]
    assert len(lines) == 1 and "database 'notes'" in lines[0]


def test_status_names_the_changed_setting(world):
    assert "processing: was processed with other settings than configured (processing.chunk_size 128 -> 64)" in (
        world.runs["status"].stdout
    )
    [database] = json.loads(world.runs["status_json"].stdout)["databases"]
    assert database["processing"]["state"] == "differs"
    assert database["processing"]["changes"] == [{"key": "processing.chunk_size", "recorded": 128, "configured": 64}]


def test_doctor_warns_of_the_changed_setting(world):
    out = world.facts["doctor"].stdout
    assert "warn  processing: was processed with other settings than configured (processing.chunk_size 128 -> 64)" in out
    assert "haiku-ingester reprocess --db-name notes" in out


# --- reprocess --------------------------------------------------------------------------------


def test_reprocess_re_chunks_every_document_whose_file_is_there(world):
    report = world.facts["report"]
    assert report.recorded and report.documents == 4 and report.jobs.written == 4
    for name in ("survey.md", "census.md", "walks.md"):
        assert len(world.chunks["after"][world.uri(name)]) > len(world.chunks["first"][world.uri(name)]), name


def test_reprocessed_chunks_are_what_the_new_chunk_size_makes(world):
    from haiku.core.convert.files import FileConverter

    files = FileConverter(world.config)
    document = files.convert(world.folder / "survey.md")
    assert world.chunks["after"][world.uri("survey.md")] == [c.embed_text for c in files.chunk(document)]


def test_reprocess_embeds_only_the_chunk_texts_that_changed(world):
    report = world.facts["report"]
    first, after = world.chunks["first"], world.chunks["after"]
    new_texts = sum(1 for uri, texts in after.items() for text in texts if text not in set(first[uri]))
    assert world.facts["embedded"] == report.jobs.embedded == new_texts
    assert report.jobs.reused >= 1 and after[world.uri("short.md")] == first[world.uri("short.md")]


def test_reprocess_records_the_configured_identity(world):
    assert world.recorded["after"] == processing_identity(world.config)


def test_a_document_whose_file_is_gone_is_kept_as_it_was_and_reported(world):
    report = world.facts["report"]
    assert [(k.uri, k.reason) for k in report.kept] == [(world.uri("gone.md"), "its source file is gone")]
    assert world.chunks["after"][world.uri("gone.md")] == world.chunks["first"][world.uri("gone.md")]


def test_status_and_doctor_say_the_settings_match_after_reprocess(world):
    [database] = json.loads(world.runs["status_after"].stdout)["databases"]
    assert database["processing"] == {"state": "matches", "changes": [], "formats_added": [], "reprocessing": None}
    assert "ok    processing: was processed with the configured settings" in world.facts["doctor_after"].stdout


def test_reprocess_with_the_settings_unchanged_does_nothing(world):
    again = world.facts["again"]
    assert again.unchanged and again.ok and again.jobs.written == 0 and world.facts["embedded_again"] == 0


# --- a killed reprocess resumes ----------------------------------------------------------------


def test_a_killed_reprocess_leaves_the_old_identity_and_its_jobs_queued(world):
    assert world.facts["killed"].returncode == -signal.SIGKILL, world.facts["killed"].stderr
    assert world.recorded["killed"]["processing.chunk_size"] == 128
    assert world.facts["forced_left"] >= 2  # in a claim that died, or never claimed: queued again on start
    [database] = json.loads(world.runs["status_killed"].stdout)["databases"]
    assert database["processing"]["reprocessing"]["documents"] == 4


def test_rerunning_a_killed_reprocess_finishes_only_what_was_left_and_records_the_identity(world):
    resumed = world.runs["resumed"]
    assert resumed.returncode == 0, resumed.stderr
    report = json.loads(resumed.stdout)
    assert report["resumed"] and report["recorded"] and report["jobs"]["written"] < 4
    assert world.recorded["resumed"] == processing_identity(world.config)
    present = [world.uri(n) for n in FILES if n != "gone.md"]
    assert {u: world.chunks["resumed"][u] for u in present} == {u: world.chunks["after"][u] for u in present}


# --- a database written before identities were recorded ------------------------------------------


async def test_a_database_with_documents_and_no_record_is_reported_unknown_and_not_adopted(tmp_path):
    """Written without a processing record (by an older ingester, here by the store directly)."""
    from haiku.core.models import Chunk, Document
    from haiku.core.store import Store

    folder = tmp_path / "empty"
    folder.mkdir()
    config_path = write_ingester_config(
        tmp_path / "cfg.yaml",
        data_dir=tmp_path / "data",
        databases={"old": tmp_path / "old.lancedb"},
        ingested={"old": [fs_source(folder, id="files")]},
    )
    config = load_config(config_path)
    store = await Store.open(ingested_refs(config, ["old"])["old"], config, create=True)
    try:
        document = Document(uri="file:///elsewhere/a.md", title="A", content="Alpha.", metadata={"source_id": "other"})
        await store.writer().documents.upsert_document(document, [Chunk(content="Alpha.", order=0)], [[0.1] * 384])
    finally:
        await store.close()

    batch = run_cli(["run-batch"], config=config_path)
    status = run_cli(["status", "--json"], config=config_path)
    _, recorded = await database_state(config, "old")
    [warning] = [w for w in warnings_of(batch.stderr) if "processing settings" in w["event"]]
    assert "database 'old' records no processing settings" in warning["event"]
    assert "haiku-ingester reprocess --db-name old" in warning["event"]
    assert recorded is None
    assert json.loads(status.stdout)["databases"][0]["processing"]["state"] == "unknown"
