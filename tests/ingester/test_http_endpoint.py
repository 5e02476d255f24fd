"""serve's HTTP endpoint (docs/operations.md): health, Prometheus metrics, status, limits.

One real ``serve`` with ``ingester.http`` on a free loopback port runs a
scenario (files added, edited, broken; a database's directory renamed away and
back; 200 silent connections) and records what it saw; each test reads one
behaviour from the record. /metrics is parsed with prometheus_client's own
parser. Daemons with no database (no model loads) check the token off
loopback, a taken port and a reload.
"""

from __future__ import annotations

import json
import signal
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml
from ingester_support import ServeProcess, fs_source, run_cli, wait_until, write_files, write_ingester_config
from prometheus_client.parser import text_string_to_metric_families

from support import write_config

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

LANDS_S = 120  # generous for a loaded machine; a note usually lands in a second or two
NEVER = 10**6  # no periodic sweep: pickups are the watcher's
TOKEN = "s3cret-token-for-tests"
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get(port: int, path: str, token: str | None = None, timeout: float = 10) -> tuple[int, bytes]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with _NO_PROXY.open(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except OSError as exc:  # refused, reset: not answering (yet)
        return 0, str(exc).encode()


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of /metrics: (name, sorted labels) -> value, as prometheus_client parses it."""
    status, body = get(port, "/metrics")
    if status != 200:
        return {}
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(body.decode())
        for sample in family.samples
    }


def value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def skipped(samples: dict, reason: str, database: str = "papers") -> float:
    return value(samples, "haiku_ingester_files_skipped", database=database, reason=reason)


def jobs(samples: dict, database: str, outcome: str) -> float:
    return value(samples, "haiku_ingester_jobs_total", database=database, outcome=outcome)


def http_section(port: int, **extra: Any) -> dict[str, Any]:
    return {"enabled": True, "host": "127.0.0.1", "port": port, **extra}


def with_http(config: Path, section: dict[str, Any]) -> Path:
    data = yaml.safe_load(config.read_text())
    data["ingester"]["http"] = section
    return write_config(config, data)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("http")
    papers_dir, notes_dir = root / "papers", root / "notes"
    papers_dir.mkdir()
    notes_dir.mkdir()
    write_files(notes_dir, {"n1.md": "# Otters\n\nOtters hold hands while they sleep.\n"})
    papers_db = root / "papers.lancedb"
    config = write_ingester_config(
        root / "cfg.yaml",
        data_dir=root / "data",
        databases={"papers": papers_db, "notes": root / "notes.lancedb"},
        ingested={
            "papers": [fs_source(papers_dir, poll_interval_s=NEVER)],
            "notes": [fs_source(notes_dir, poll_interval_s=NEVER)],
        },
    )
    port = free_port()
    with_http(config, http_section(port))
    facts: dict[str, Any] = {"port": port, "config": config}
    daemon = ServeProcess(config, root)
    try:
        facts["ready"] = daemon.wait_for_message("READY=1", timeout=180)
        facts["live"] = wait_until(lambda: get(port, "/health/live")[0] == 200, 30)
        facts["ready_http"] = wait_until(lambda: get(port, "/health/ready")[0] == 200, 120)
        wait_until(lambda: jobs(scrape(port), "notes", "done") >= 1, LANDS_S)
        before = scrape(port)
        facts["before"] = before

        # added, edited, skipped (empty: no job; not text: a job that skips it)
        write_files(papers_dir, {"a.md": "# Alpha\n\nAlpha mentions auroras.\n", "b.md": "# Beta\n\nBeta is brief.\n"})
        wait_until(lambda: jobs(scrape(port), "papers", "done") >= jobs(before, "papers", "done") + 2, LANDS_S)
        (papers_dir / "a.md").write_text("# Alpha\n\nAlpha now mentions lighthouses instead.\n")
        wait_until(lambda: jobs(scrape(port), "papers", "done") >= jobs(before, "papers", "done") + 3, LANDS_S)
        (papers_dir / "empty.md").write_bytes(b"")
        (papers_dir / "binary.md").write_bytes(b"# Not text\x00\x01\x02" * 10)
        wait_until(lambda: skipped(scrape(port), "empty") + skipped(scrape(port), "not_text") >= 2, LANDS_S)
        time.sleep(1.5)  # nothing more should move
        facts["after"] = scrape(port)
        facts["metrics_text"] = get(port, "/metrics")[1].decode()

        # /status, and `status` asking whether the endpoint answers
        facts["status_http"] = get(port, "/status")
        facts["status_cli"] = run_cli(["status", "--json"], config=config)
        facts["status_text"] = run_cli(["status"], config=config)

        # 200 connections that send nothing: a file still lands in its usual time
        started = time.monotonic()
        write_files(papers_dir, {"c.md": "# Gamma\n\nGamma is the baseline.\n"})
        wait_until(lambda: jobs(scrape(port), "papers", "done") >= jobs(before, "papers", "done") + 5, LANDS_S)
        facts["usual_s"] = time.monotonic() - started
        silent = []
        for _ in range(200):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            silent.append(sock)
        try:
            started = time.monotonic()
            write_files(papers_dir, {"d.md": "# Delta\n\nDelta arrived during a flood of silent connections.\n"})
            # read from the queue file: over the cap, /metrics itself answers 503
            wait_until(lambda: _documents(root, "papers") >= 4, LANDS_S)
            facts["flooded_s"] = time.monotonic() - started
            facts["live_during_flood"] = get(port, "/health/live")[0]
        finally:
            for sock in silent:
                sock.close()
        facts["live_after_flood"] = wait_until(lambda: get(port, "/health/live")[0] == 200, 30)

        # the papers database's directory renamed away, and back
        moved = root / "papers.moved"
        papers_db.rename(moved)
        facts["ready_gone"] = get(port, "/health/ready")
        facts["metrics_gone"] = scrape(port)
        moved.rename(papers_db)
        facts["ready_back"] = wait_until(lambda: get(port, "/health/ready")[0] == 200, 30)
    finally:
        facts["exit"] = daemon.stop()
        facts["log"] = daemon.log_text()
    return facts


def _documents(root: Path, database: str) -> int:
    """Documents of ``database`` the queue's sync state knows (what ``status`` counts)."""
    from ingester_support import queue_rows

    rows = queue_rows(
        root / "data" / "ingester.db",
        "SELECT COUNT(*) FROM sync_state WHERE database = ? AND document_id IS NOT NULL",
        (database,),
    )
    return rows[0][0]


def test_the_endpoint_answers_live_and_ready_once_serve_is_ready(served):
    assert served["ready"] and served["live"] and served["ready_http"], served["log"][-3000:]


def test_job_counters_move_by_exactly_the_jobs_done(served):
    before, after = served["before"], served["after"]
    assert jobs(after, "papers", "done") - jobs(before, "papers", "done") == 4  # two added, one edited, one skipped
    assert jobs(after, "papers", "dead") - jobs(before, "papers", "dead") == 0  # a skipped file is never dead
    assert jobs(after, "notes", "done") == jobs(before, "notes", "done") == 1
    assert value(after, "haiku_ingester_documents_written_total", database="papers") == 3


def test_skipped_files_are_shown_by_reason(served):
    after = served["after"]
    assert skipped(after, "empty") == 1 and skipped(after, "not_text") == 1
    assert value(after, "haiku_ingester_dead_files", database="papers") == 0


def test_metrics_show_queue_documents_durations_and_engine(served):
    after = served["after"]
    assert value(after, "haiku_ingester_documents", database="papers") == 2
    assert value(after, "haiku_ingester_queue_jobs", database="papers", state="queued") == 0
    assert value(after, "haiku_ingester_chunks", database="notes") >= 1
    assert value(after, "haiku_ingester_conversion_duration_seconds_count", format="md") >= 3
    assert value(after, "haiku_ingester_embedding_duration_seconds_count") >= 1
    assert value(after, "haiku_ingester_engine_info", engine="local") == 1
    assert value(after, "process_resident_memory_bytes") > 0
    assert value(after, "haiku_ingester_last_write_timestamp_seconds", database="papers") > time.time() - 600


def test_metric_labels_name_databases_never_paths(served):
    text = served["metrics_text"]
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            for label_value in sample.labels.values():
                assert "/" not in label_value, (sample.name, label_value)


def test_status_endpoint_is_status_json_with_uptime_and_digest(served):
    code, body = served["status_http"]
    assert code == 200
    endpoint = json.loads(body)
    cli = json.loads(served["status_cli"].stdout)
    assert set(endpoint) == (set(cli) - {"http"}) | {"uptime_s", "config_digest"}
    assert [d["name"] for d in endpoint["databases"]] == [d["name"] for d in cli["databases"]]
    assert endpoint["config_digest"].startswith("sha256:") and endpoint["uptime_s"] > 0


def test_status_says_the_endpoint_answers(served):
    assert json.loads(served["status_cli"].stdout)["http"]["answers"] is True
    assert f"http endpoint: answers on 127.0.0.1:{served['port']}" in served["status_text"].stdout


def test_silent_connections_do_not_slow_ingestion(served):
    assert served["flooded_s"] < max(3 * served["usual_s"], 10), (served["usual_s"], served["flooded_s"])
    assert served["live_after_flood"]


def test_readiness_is_503_naming_the_database_whose_directory_is_gone(served):
    code, body = served["ready_gone"]
    assert code == 503
    answer = json.loads(body)
    assert answer["databases"] == {"papers": "its directory is missing", "notes": "ready"}
    assert "lancedb" not in body.decode()  # the name, never the path
    assert value(served["metrics_gone"], "haiku_ingester_database_ready", database="papers") == 0


def test_readiness_is_200_again_once_the_directory_returns(served):
    assert served["ready_back"]


def test_serve_stops_cleanly_with_the_endpoint(served):
    assert served["exit"] == 0, served["log"][-3000:]


# --- daemons with no database: no model loads ----------------------------------------------------


def _idle_config(root: Path, http: dict[str, Any]) -> Path:
    data = {"storage": {"data_dir": str(root / "data")}, "ingester": {"databases": {}, "http": http}}
    return write_config(root / "idle.yaml", data)


def test_off_loopback_the_endpoint_refuses_requests_without_the_token(tmp_path):
    port = free_port()
    config = _idle_config(tmp_path, http_section(port, host="0.0.0.0", token_env="HAIKU_TEST_HTTP_TOKEN"))
    daemon = ServeProcess(config, tmp_path, extra_env={"HAIKU_TEST_HTTP_TOKEN": TOKEN})
    try:
        assert daemon.wait_for_message("READY=1", timeout=60), daemon.log_text()
        assert wait_until(lambda: get(port, "/health/live")[0] == 200, 30)
        assert get(port, "/metrics")[0] == 401
        assert get(port, "/metrics", token="wrong")[0] == 401
        assert get(port, "/metrics", token=TOKEN)[0] == 200
    finally:
        daemon.stop()


def test_off_loopback_without_a_token_the_configuration_is_refused(tmp_path):
    config = _idle_config(tmp_path, http_section(free_port(), host="0.0.0.0"))
    result = run_cli(["serve"], config=config, timeout=60)
    assert result.returncode == 1
    assert "ingester.http.token_file or ingester.http.token_env" in result.stderr


def test_a_taken_port_fails_the_start_naming_the_key(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_cli(["serve"], config=_idle_config(tmp_path, http_section(port)), timeout=60)
    assert result.returncode == 1
    assert f"ingester.http.port {port}" in result.stderr


def test_a_reload_keeps_the_endpoint_and_says_a_restart_applies_it(tmp_path):
    port = free_port()
    config = _idle_config(tmp_path, http_section(port))
    daemon = ServeProcess(config, tmp_path)
    try:
        assert daemon.wait_for_message("READY=1", timeout=60), daemon.log_text()
        _idle_config(tmp_path, http_section(free_port()))
        daemon.signal(signal.SIGHUP)
        assert wait_until(lambda: "until haiku-ingester restarts" in daemon.log_text(), 30), daemon.log_text()
        assert get(port, "/health/live")[0] == 200
    finally:
        daemon.stop()


def test_run_batch_writes_its_metrics_to_the_metrics_file(tmp_path):
    source = tmp_path / "src"
    write_files(source, {"one.md": "# One\n\nThe first note.\n", "two.md": "# Two\n\nThe second note.\n"})
    config = write_ingester_config(
        tmp_path / "cfg.yaml",
        data_dir=tmp_path / "data",
        databases={"papers": tmp_path / "papers.lancedb"},
        ingested={"papers": [fs_source(source)]},
    )
    target = tmp_path / "textfile" / "haiku.prom"
    result = run_cli(["run-batch", "--metrics-file", str(target)], config=config, timeout=300)
    assert result.returncode == 0, result.stderr
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(target.read_text())
        for s in family.samples
    }
    assert jobs(samples, "papers", "done") == 2
    assert value(samples, "haiku_ingester_documents", database="papers") == 2
    assert value(samples, "haiku_ingester_batch_end_time_seconds") > time.time() - 600
    assert not any(name.startswith("process_") for name, _ in samples)  # node-exporter has its own
    assert not [p for p in target.parent.iterdir() if p != target]  # written whole, by a rename
