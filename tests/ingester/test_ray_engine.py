"""The Ray engine on a real local Ray cluster (docs/scale-out.md).

One head node on 127.0.0.1 serves the module. The same folder is ingested by
the local engine and by the Ray engine while a Ray conversion worker is killed
mid-task; a file whose worker dies on every try is dead-lettered; a cluster
that is not there makes run-batch exit 1 with its jobs queued and serve wait,
then ingest once a cluster comes up at that address.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from ingester_support import (
    CLI,
    CliResult,
    ServeProcess,
    fs_source,
    queue_rows,
    snapshot,
    wait_until,
    write_files,
    write_ingester_config,
)
from ray_cluster import RayCluster, free_port, ray_env

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def _section(title: str, topic: str) -> str:
    sentences = " ".join(f"{topic.capitalize()} note {i} says something about {topic} and its habits." for i in range(14))
    return f"## {title}\n\n{sentences}\n\n"


# Long enough for several chunks, so that an edit to one section leaves the others' vectors to reuse.
HERONS = "# Herons\n\n" + _section("Feeding", "wading") + _section("Nests", "colonies") + _section("Flight", "wings")
FILES = {
    "notes/heron.md": HERONS,
    "kestrel.txt": "Plain notes about kestrels.\n\nThey hover over fields before they dive.\n",
    "owls.html": "<html><body><h1>Owls</h1><p>Owls hunt at night.</p><p>Their flight is silent.</p></body></html>",
    "swift.md": "# Swifts\n\nSwifts sleep on the wing and land only to nest.\n",
}


def ray_engine(address: str, **options: Any) -> dict[str, Any]:
    return {"type": "ray", "address": address, "converters": 2, "embedders": 1, **options}


def config_for(root: Path, name: str, folder: Path, engine: dict[str, Any] | None = None, **workers: Any) -> Path:
    path = write_ingester_config(
        root / f"{name}.yaml",
        data_dir=root / f"{name}-data",
        databases={name: root / f"{name}.lancedb"},
        ingested={name: [fs_source(folder, id=f"{name}-files")]},
        workers=workers or None,
    )
    if engine is not None:
        data = yaml.safe_load(path.read_text())
        data["ingester"]["engine"] = engine
        path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def run(args: list[str], config: Path, timeout: float = 240) -> CliResult:
    started = time.monotonic()
    done = subprocess.run(
        [*CLI, "--config", str(config), "--log-format", "json", *args],
        capture_output=True, text=True, timeout=timeout, env=ray_env(),
    )  # fmt: skip
    return CliResult(done.returncode, done.stdout, done.stderr, time.monotonic() - started)


class Killer(threading.Thread):
    """SIGKILLs the cluster's conversion workers while they convert: ``times`` of them, or every one."""

    def __init__(self, cluster: RayCluster, times: int | None) -> None:
        super().__init__(daemon=True)
        self.cluster, self.times, self.killed = cluster, times, []
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set() and (self.times is None or len(self.killed) < self.times):
            for pid in self.cluster.worker_pids("ray::convert_file"):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    continue
                self.killed.append(pid)
                break
            time.sleep(0.05)


async def chunk_vectors(location: Path) -> dict[tuple[str, int], list[float]]:
    """(document uri, chunk order) -> the chunk's vector, read below the store."""
    import lancedb

    db = await lancedb.connect_async(str(location))
    documents = {r["id"]: r["uri"] for r in await (await db.open_table("documents")).query().to_list()}
    rows = await (await db.open_table("chunks")).query().select(["document_id", "chunk_order", "vector"]).to_list()
    return {(documents[r["document_id"]], r["chunk_order"]): list(r["vector"]) for r in rows}


async def search(config: Path, query: str) -> list[tuple[str, str]]:
    from haiku.core.config import load_config
    from haiku.rag.client import HaikuRAG

    async with HaikuRAG(config=load_config(config), read_only=True) as client:
        return [(r.document_uri, r.content) for r in await client.search(query, limit=3)]


def relative(state: dict[str, Any], folder: Path) -> dict[str, Any]:
    return {uri.removeprefix(folder.resolve().as_uri()): value for uri, value in state.items()}


@dataclass
class World:
    root: Path
    local_dir: Path
    ray_dir: Path
    runs: dict[str, CliResult] = field(default_factory=dict)
    facts: dict[str, Any] = field(default_factory=dict)


@pytest.fixture(scope="module")
def cluster():
    head = RayCluster().start()
    try:
        yield head
    finally:
        head.stop()


@pytest.fixture(scope="module")
async def world(tmp_path_factory, cluster) -> World:
    root = tmp_path_factory.mktemp("ray")
    w = World(root=root, local_dir=root / "local-files", ray_dir=root / "ray-files")
    write_files(w.local_dir, FILES)
    write_files(w.ray_dir, FILES)
    w.runs["local"] = run(["run-batch"], config_for(root, "local", w.local_dir))
    # The Ray engine given on the command line, over a config that names the local one.
    killer = Killer(cluster, times=1)
    killer.start()
    w.runs["ray"] = run(["run-batch", "--engine", "ray", "--address", cluster.address], config_for(root, "ray", w.ray_dir))
    killer.done.set()
    w.facts["killed"] = killer.killed
    for name, folder in (("local", w.local_dir), ("ray", w.ray_dir)):
        location = root / f"{name}.lancedb"
        w.facts[name] = {
            "documents": relative(await snapshot(location, name), folder),
            "vectors": {(k[0].removeprefix(folder.resolve().as_uri()), k[1]): v
                        for k, v in (await chunk_vectors(location)).items()},
            "search": [
                [(u.removeprefix(folder.resolve().as_uri()), c) for u, c in await search(root / f"{name}.yaml", q)]
                for q in ("where do herons nest", "birds that hunt at night")
            ],
            "attempts": queue_rows(root / f"{name}-data" / "ingester.db", "SELECT uri, attempts, status FROM jobs"),
        }

    # One file whose conversion worker is killed on every try: dead after 1 + max_task_retries tries.
    doomed_dir = root / "doomed-files"
    write_files(doomed_dir, {"doomed.md": "# Doomed\n\nEvery worker that converts this file dies.\n"})
    killer = Killer(cluster, times=None)
    killer.start()
    doomed = config_for(root, "doomed", doomed_dir, ray_engine(cluster.address, max_task_retries=1))
    w.runs["doomed"] = run(["run-batch"], doomed)
    killer.done.set()
    w.facts["doomed_killed"] = len(killer.killed)
    w.facts["doomed_status"] = run(["status", "--dead", "--json"], doomed)
    return w


def test_the_ray_engine_writes_the_documents_and_chunks_the_local_engine_writes(world):
    assert world.runs["local"].returncode == 0, world.runs["local"].stderr
    assert world.runs["ray"].returncode == 0, world.runs["ray"].stderr[-3000:]
    local, ray = world.facts["local"]["documents"], world.facts["ray"]["documents"]
    assert sorted(ray) == sorted(local) and len(ray) == len(FILES)
    for uri, doc in local.items():
        assert (ray[uri].title, ray[uri].content_hash, ray[uri].chunk_texts) == (
            doc.title, doc.content_hash, doc.chunk_texts
        ), uri


def test_the_ray_engine_vectors_match_the_local_engine_within_1e_5(world):
    local, ray = world.facts["local"]["vectors"], world.facts["ray"]["vectors"]
    assert sorted(ray) == sorted(local)
    worst = max(max(abs(a - b) for a, b in zip(local[k], ray[k], strict=True)) for k in local)
    assert worst <= 1e-5


def test_searches_of_the_ray_engine_database_return_what_the_local_one_does(world):
    assert world.facts["ray"]["search"] == world.facts["local"]["search"]
    assert all(world.facts["ray"]["search"])


def test_a_ray_worker_killed_mid_conversion_is_retried_and_its_file_written_once(world):
    assert len(world.facts["killed"]) == 1  # killed while its title said it was converting
    rows = world.facts["ray"]["attempts"]
    assert sorted(status for _, _, status in rows) == ["succeeded"] * len(FILES)
    assert all(attempts == 1 for _, attempts, _ in rows)  # Ray retried it; the queue saw one attempt
    chunks = sum(len(d.chunk_texts) for d in world.facts["ray"]["documents"].values())
    assert chunks == len(world.facts["ray"]["vectors"])  # no chunk row twice


def test_a_file_whose_worker_dies_on_every_try_is_dead_lettered_with_its_reason(world):
    result = world.runs["doomed"]
    assert result.returncode == 1, result.stderr[-3000:]
    assert world.facts["doomed_killed"] == 2, world.facts["doomed_killed"]  # the first try and 1 retry
    assert "the conversion worker died while converting it" in result.stderr
    dead = world.facts["doomed_status"]
    assert "doomed.md" in dead.stdout and "died while converting it" in dead.stdout, dead.stdout


def test_run_batch_with_no_cluster_at_the_address_exits_1_and_leaves_the_jobs_queued(tmp_path):
    folder = tmp_path / "files"
    write_files(folder, {"a.md": "# A\n\nSome text.\n", "b.md": "# B\n\nMore text.\n"})
    config = config_for(tmp_path, "gone", folder, ray_engine(f"127.0.0.1:{free_port()}"))
    result = run(["run-batch"], config)
    assert result.returncode == 1
    error = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(error) == 1 and "the Ray cluster at 127.0.0.1:" in error[0] and "jobs stay queued" in error[0]
    rows = queue_rows(tmp_path / "gone-data" / "ingester.db", "SELECT status, attempts FROM jobs")
    assert sorted(rows) == [("queued", 0), ("queued", 0)]


def test_type_ray_without_ray_installed_is_refused_at_start_with_the_install_command(tmp_path):
    folder = tmp_path / "files"
    write_files(folder, {"a.md": "# A\n\nSome text.\n"})
    config = config_for(tmp_path, "noray", folder, ray_engine("auto"))
    hidden = "import sys; sys.modules['ray'] = None; from haiku.ingester.cli import main; sys.argv[0] = 'haiku-ingester'; main()"
    done = subprocess.run(
        [sys.executable, "-c", hidden, "--config", str(config), "run-batch"],
        capture_output=True, text=True, timeout=120, env=ray_env(),
    )  # fmt: skip
    assert done.returncode == 1
    assert "Ray is not installed" in done.stderr and "pip install 'haiku-ingester[ray]'" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "noray.lancedb").exists()


def test_the_ingester_and_the_local_engine_never_import_ray(tmp_path):
    probe = (
        "import sys\n"
        "import haiku.ingester.cli, haiku.ingester.app, haiku.ingester.batch, haiku.ingester.daemon\n"
        "import haiku.ingester.pipeline.engine_ray\n"
        "from haiku.core.config import AppConfig\n"
        "from haiku.ingester.pipeline.engine import build_engine\n"
        "build_engine(AppConfig(), starving=lambda: False)\n"
        "assert 'ray' not in sys.modules, 'ray imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, env=ray_env())
    assert done.returncode == 0, done.stderr


async def test_serve_waits_for_a_missing_cluster_keeps_its_queue_then_ingests_and_reuses_vectors(tmp_path):
    folder = tmp_path / "files"
    write_files(folder, {"a.md": FILES["swift.md"], "b.md": FILES["notes/heron.md"]})
    port = free_port()
    config = config_for(tmp_path, "served", folder, ray_engine(f"127.0.0.1:{port}"))
    queue = tmp_path / "served-data" / "ingester.db"
    serve = ServeProcess(config, tmp_path, extra_env=ray_env())
    late: RayCluster | None = None
    try:
        assert serve.wait_for_message("READY=1", timeout=120), serve.log_text()
        assert wait_until(lambda: "the engine is unavailable; claiming again later" in serve.log_text(), 60)
        time.sleep(3)  # at least one more try with back-off
        assert serve.proc.poll() is None
        # Each try claims a job and releases it when the cluster cannot be reached: between
        # tries both are queued again, none dead for a cluster fault.
        both_queued = [("queued",), ("queued",)]
        assert wait_until(lambda: sorted(queue_rows(queue, "SELECT status FROM jobs")) == both_queued, 30), (
            queue_rows(queue, "SELECT status, attempts FROM jobs")
        )

        late = RayCluster(port=port).start()
        location = tmp_path / "served.lancedb"
        assert wait_until(lambda: len(queue_rows(queue, "SELECT 1 FROM jobs WHERE status = 'succeeded'")) == 2, 180)
        before = await snapshot(location, "served")

        # An edit re-embeds only the changed chunk; the others keep their stored vectors.
        (folder / "b.md").write_text(HERONS.replace("Flight", "Flight and song"))
        assert wait_until(lambda: len(queue_rows(queue, "SELECT 1 FROM jobs WHERE status = 'succeeded'")) == 3, 120)
        after = await snapshot(location, "served")
    finally:
        code = serve.stop()
        if late is not None:
            late.stop()
    log = serve.log_text()
    assert code == 0, log[-3000:]
    assert sorted(after) == sorted(before)
    edited = [line for line in log.splitlines() if '"job done"' in line and "b.md" in line][-1]
    assert '"embedded": 1,' in edited and '"reused": 0' not in edited, edited
    assert queue_rows(queue, "SELECT COUNT(*) FROM jobs WHERE status = 'dead'") == [(0,)]
