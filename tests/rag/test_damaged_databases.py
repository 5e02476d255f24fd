"""A damaged or unreachable database ends a command with ``Error: database 'NAME' …``, exit 1.

No traceback, no path or URI. Issue 13, items 5 (the reading side; the ingester's side is in
tests/ingester/test_bad_locations.py) and 6 (object storage that never answers).
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest
from rag_support import config_data
from rag_support import invoke as cli

from support import copy_database, write_config


def _remove_chunk_data(path: Path) -> None:
    files = list((path / "chunks.lance" / "data").glob("*.lance"))
    assert files
    for file in files:
        file.unlink()


def _garble_full_text_index(path: Path) -> None:
    files = list((path / "chunks.lance" / "_indices").glob("*/part_*_invert.lance"))
    assert files
    for file in files:
        file.write_bytes(b"\x00garbled\xff" * 10)


@pytest.mark.parametrize(
    ("damage", "search_type"),
    [(_remove_chunk_data, "hybrid"), (_garble_full_text_index, "fts")],
    ids=["a data file missing", "a garbled full-text index"],
)
def test_a_damaged_database_fails_a_search_naming_it_without_traceback_or_path(
    built, tmp_path, damage, search_type
):
    path = copy_database(built["papers"], tmp_path / "papers.lancedb")
    damage(path)
    config = write_config(tmp_path / "c.yaml", config_data(tmp_path / "data", {"papers": path}))
    result = cli("search", "-s", search_type, "pasta water", config=config)
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("Error: database 'papers' could not be read")
    assert "Traceback" not in result.stderr and str(tmp_path) not in result.stderr


@pytest.fixture
def silent_endpoint():
    """A loopback server that accepts connections and never answers; yields its URL."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []
    stopping = threading.Event()

    def accept() -> None:
        while not stopping.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                return
            held.append(conn)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}"
    finally:
        stopping.set()
        server.close()
        for conn in held:
            conn.close()


def test_an_s3_endpoint_that_never_answers_fails_list_within_its_configured_bound_naming_the_database(
    tmp_path, silent_endpoint
):
    options = {
        "aws_endpoint": silent_endpoint,
        "aws_access_key_id": "testing",
        "aws_secret_access_key": "testing",
        "aws_region": "us-east-1",
        "allow_http": "true",
    }
    # A bound of 3 s, not the default 30 s: the run must end well before the default could end it.
    lancedb = {"storage_options": options, "object_storage_timeout_s": 3}
    data = config_data(tmp_path / "data", {"remote": "s3://bucket/remote.lancedb"}, lancedb=lancedb)
    config = write_config(tmp_path / "c.yaml", data)
    started = time.monotonic()
    result = cli("list", config=config)
    assert time.monotonic() - started < 30
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        "Error: database 'remote' could not be opened: its storage did not answer within 3 s"
    )
    assert "s3://" not in result.stderr and "127.0.0.1" not in result.stderr
