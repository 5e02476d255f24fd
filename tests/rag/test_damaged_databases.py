"""A damaged database ends a command with ``Error: database 'NAME' …``, exit 1, no traceback, no path.

Issue 13, item 5 (the reading side; the ingester's side is in tests/ingester/test_bad_locations.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rag_support import cli, config_data, copy_database, write_config


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
