"""Shared worlds for the ingester's subprocess tests.

Each world runs the real ``haiku-ingester`` a few times over real folders and
records what every run printed and what the databases held afterwards; the
tests then read the record, one behaviour each. A run costs a model load, so
runs are shared between the tests that inspect them.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from ingester_support import (
    CliResult,
    DocState,
    fs_source,
    queue_rows,
    remove_document,
    run_cli,
    snapshot,
    tiny_markdown,
    write_files,
    write_ingester_config,
)


@pytest.fixture
def queue(tmp_path):
    """A fresh job queue file owned by "me"."""
    from haiku.ingester.queue import IngestQueue

    q = IngestQueue(tmp_path / "q" / "ingester.db", owner="me")
    yield q
    q.close()


@dataclass
class BatchWorld:
    root: Path
    config: Path
    a_dir: Path
    b_dir: Path
    a_db: Path
    b_db: Path
    queue: Path
    runs: dict[str, CliResult] = field(default_factory=dict)
    states: dict[str, dict[str, dict[str, DocState]]] = field(default_factory=dict)
    jobs: dict[str, int] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)

    def uri(self, path: Path) -> str:
        return path.resolve().as_uri()


@pytest.fixture(scope="session")
async def batch_world(tmp_path_factory) -> BatchWorld:
    """Two folders, two databases; then: rerun, touch/edit/delete, and an emptied root."""
    root = tmp_path_factory.mktemp("batch")
    a_dir, b_dir = root / "A", root / "B"
    write_files(a_dir, {f"a{i}.md": tiny_markdown(i) for i in range(1, 5)})
    write_files(
        b_dir,
        {
            "b1.md": "# Birds\n\nThe heron waits in the shallows.\n",
            "b2.txt": "Plain notes about kestrels.\n\nThey hover.\n",
            "b3.html": "<html><body><h1>Owls</h1><p>Owls hunt at night.</p></body></html>",
        },
    )
    world = BatchWorld(
        root=root,
        config=write_ingester_config(
            root / "cfg.yaml",
            data_dir=root / "data",
            databases={"a": root / "a.lancedb", "b": root / "b.lancedb"},
            ingested={"a": [fs_source(a_dir, id="folder-a")], "b": [fs_source(b_dir, id="folder-b")]},
        ),
        a_dir=a_dir,
        b_dir=b_dir,
        a_db=root / "a.lancedb",
        b_db=root / "b.lancedb",
        queue=root / "data" / "ingester.db",
    )

    async def record(label: str, args: list[str]) -> None:
        world.runs[label] = run_cli(args, config=world.config)
        world.states[label] = {"a": await snapshot(world.a_db, "a"), "b": await snapshot(world.b_db, "b")}
        world.jobs[label] = queue_rows(world.queue, "SELECT COUNT(*) FROM jobs")[0][0]

    await record("first", ["run-batch"])
    await record("unchanged", ["run-batch"])

    # touch a1 (same bytes), edit a2, delete a3; touch a4 after removing its document
    # from the database behind the ingester's back (its sync state still names it)
    later = time.time_ns() + 5 * 10**9
    os.utime(a_dir / "a1.md", ns=(later, later))
    os.utime(a_dir / "a4.md", ns=(later, later))
    await remove_document(world.a_db, "a", world.uri(a_dir / "a4.md"))
    (a_dir / "a2.md").write_text("# Note 2\n\nNote two was rewritten to talk about comets instead.\n")
    (a_dir / "a3.md").unlink()
    await record("changed", ["run-batch"])
    world.notes["status_after_changed"] = run_cli(["status", "--json", "--db-name", "a"], config=world.config)

    # the B folder empties (an unmounted share, say) while its documents are known
    parked = root / "parked-B"
    shutil.move(str(b_dir), str(parked))
    b_dir.mkdir()
    await record("emptied", ["run-batch"])
    return world
