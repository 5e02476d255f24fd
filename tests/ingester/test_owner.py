"""The record `status` reads to tell whether a serve or run-batch drives a queue."""

from __future__ import annotations

import json
import os

from haiku.ingester.owner import OwnerRecord, owner_path, read_owner


def test_a_held_record_names_command_and_pid_and_a_released_one_nothing(tmp_path):
    queue = tmp_path / "data" / "ingester.db"
    assert read_owner(queue) is None
    record = OwnerRecord.take(queue, "serve")
    assert record is not None
    running = read_owner(queue)
    assert (running["command"], running["pid"]) == ("serve", os.getpid())
    assert OwnerRecord.take(queue, "run-batch") is None  # one driver per queue
    record.release()
    assert read_owner(queue) is None


def test_text_left_by_a_dead_process_does_not_count_as_running(tmp_path):
    queue = tmp_path / "ingester.db"
    owner_path(queue).write_text(json.dumps({"command": "serve", "pid": 999999, "since": "2020-01-01T00:00:00Z"}))
    assert read_owner(queue) is None
