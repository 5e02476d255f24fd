"""`haiku-ingester -q`: errors only on stderr (docs/ingester.md#commands)."""

from __future__ import annotations

from ingester_support import fs_source, run_cli, write_ingester_config


def test_q_leaves_out_the_info_events_a_run_batch_logs(tmp_path):
    (tmp_path / "docs").mkdir()
    config = write_ingester_config(
        tmp_path / "haiku.rag.yaml",
        data_dir=tmp_path / "data",
        databases={"notes": tmp_path / "notes.lancedb"},
        ingested={"notes": [fs_source(tmp_path / "docs")]},
    )
    loud = run_cli(["run-batch"], config=config)
    quiet = run_cli(["-q", "run-batch"], config=config)
    assert (loud.returncode, "database open" in loud.stderr, quiet.returncode, quiet.stderr) == (0, True, 0, ""), (
        loud.stderr + quiet.stderr
    )
