"""Sources on object storage (``type: s3``) against a moto S3 server on loopback.

The ingester lists the prefix, keeps each object's ETag and size as its
revision, reads the bytes with the source's storage options and credentials
from its environment, and reconciles deletes, through the real CLI.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import yaml
from ingester_support import queue_rows, run_cli, snapshot, write_ingester_config
from ray_cluster import RayCluster, free_port, ray_env

pytestmark = pytest.mark.slow

BUCKET = "sources"
SECRET = "s3cr3t-never-logged"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "haiku-test", "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_DEFAULT_REGION": "us-east-1"}


@pytest.fixture(scope="module")
def moto_endpoint():
    import boto3
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    client = boto3.client(
        "s3", endpoint_url=endpoint, region_name="us-east-1",
        aws_access_key_id="haiku-test", aws_secret_access_key=SECRET,
    )  # fmt: skip
    client.create_bucket(Bucket=BUCKET)
    try:
        yield endpoint, client
    finally:
        server.stop()


def s3_config(tmp_path, endpoint: str, location: str, engine: dict | None = None):
    path = write_ingester_config(
        tmp_path / "cfg.yaml",
        data_dir=tmp_path / "data",
        databases={"docs": tmp_path / "docs.lancedb"},
        ingested={"docs": []},
    )
    data = yaml.safe_load(path.read_text())
    data["ingester"]["databases"]["docs"]["sources"] = [
        {
            "type": "s3",
            "id": "bucket-docs",
            "location": location,
            "storage_options": {"aws_endpoint": endpoint, "aws_region": "us-east-1", "allow_http": True},
        }
    ]
    if engine is not None:
        data["ingester"]["engine"] = engine
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


async def test_an_s3_source_is_ingested_updated_by_etag_and_its_deletes_reconciled(tmp_path, moto_endpoint):
    endpoint, client = moto_endpoint
    put = lambda key, text: client.put_object(Bucket=BUCKET, Key=key, Body=text.encode())  # noqa: E731
    kestrels_text = "# Kestrels\n\nKestrels hover over the fields.\n"
    put("docs/kestrels.md", kestrels_text)
    put("docs/sub/owls.txt", "Owls hunt at night on silent wings.\n")
    put("docs/.hidden.md", "# Hidden\n\nNever ingested.\n")
    put("other/elsewhere.md", "# Elsewhere\n\nOutside the prefix.\n")
    config = s3_config(tmp_path, endpoint, f"s3://{BUCKET}/docs")
    location = tmp_path / "docs.lancedb"

    first = run_cli(["run-batch"], config=config, **CREDENTIALS)
    assert first.returncode == 0, first.stderr[-3000:]
    documents = await snapshot(location, "docs")
    assert sorted(documents) == [f"s3://{BUCKET}/docs/kestrels.md", f"s3://{BUCKET}/docs/sub/owls.txt"]
    assert "hover" in documents[f"s3://{BUCKET}/docs/kestrels.md"].chunk_texts[0]
    etag = client.head_object(Bucket=BUCKET, Key="docs/kestrels.md")["ETag"].strip('"')
    revisions = dict(queue_rows(tmp_path / "data" / "ingester.db", "SELECT uri, revision FROM sync_state"))
    assert revisions[f"s3://{BUCKET}/docs/kestrels.md"] == f"{etag}-{len(kestrels_text.encode())}"

    again = run_cli(["run-batch", "--json"], config=config, **CREDENTIALS)
    assert again.returncode == 0
    assert json.loads(again.stdout)["jobs"]["succeeded"] == 0, again.stdout  # same ETags: nothing to do

    put("docs/kestrels.md", "# Kestrels\n\nKestrels now nest in church towers.\n")
    client.delete_object(Bucket=BUCKET, Key="docs/sub/owls.txt")
    changed = run_cli(["run-batch"], config=config, **CREDENTIALS)
    assert changed.returncode == 0, changed.stderr[-3000:]
    after = await snapshot(location, "docs")
    assert sorted(after) == [f"s3://{BUCKET}/docs/kestrels.md"]
    kestrels = after[f"s3://{BUCKET}/docs/kestrels.md"]
    assert kestrels.id == documents[f"s3://{BUCKET}/docs/kestrels.md"].id
    assert "church towers" in kestrels.chunk_texts[0]
    for run in (first, again, changed):
        assert SECRET not in run.stderr + run.stdout


def test_an_s3_source_whose_bucket_is_missing_fails_run_batch_naming_it(tmp_path, moto_endpoint):
    endpoint, _ = moto_endpoint
    config = s3_config(tmp_path, endpoint, "s3://no-such-bucket/docs")
    result = run_cli(["run-batch"], config=config, **CREDENTIALS)
    assert result.returncode == 1
    error = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(error) == 1 and "source bucket-docs of database 'docs'" in error[0], result.stderr[-2000:]
    assert "s3://no-such-bucket/docs cannot be listed (NoSuchBucket" in error[0]
    assert SECRET not in result.stderr


async def test_with_the_ray_engine_the_worker_reads_the_object_with_its_own_credentials(tmp_path, moto_endpoint):
    endpoint, client = moto_endpoint
    client.put_object(Bucket=BUCKET, Key="ray/swifts.md", Body=b"# Swifts\n\nSwifts sleep on the wing.\n")
    client.put_object(Bucket=BUCKET, Key="ray/terns.txt", Body=b"Terns fly from pole to pole.\n")
    cluster = RayCluster(env=CREDENTIALS).start()
    titles: set[str] = set()
    try:
        engine = {"type": "ray", "address": cluster.address, "converters": 2}
        config = s3_config(tmp_path, endpoint, f"s3://{BUCKET}/ray", engine)
        import threading

        done = threading.Event()

        def watch() -> None:  # which Ray tasks ran: the object is read where it is converted
            while not done.is_set():
                titles.update(t.split()[0] for t in map(cluster.title_of, cluster.session_pids("ray::")) if t)
                done.wait(0.05)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        result = run_cli(["run-batch"], config=config, **ray_env(**CREDENTIALS))
        done.set()
        watcher.join()
        logs = "".join(p.read_text(errors="replace") for p in Path(cluster.temp_dir).rglob("*") if p.is_file()
                       and p.suffix in (".log", ".out", ".err"))  # fmt: skip
    finally:
        cluster.stop()
    assert result.returncode == 0, result.stderr[-3000:]
    assert "ray::convert_object" in titles and "ray::convert_file" not in titles, titles
    documents = await snapshot(tmp_path / "docs.lancedb", "docs")
    assert sorted(documents) == [f"s3://{BUCKET}/ray/swifts.md", f"s3://{BUCKET}/ray/terns.txt"]
    assert "on the wing" in documents[f"s3://{BUCKET}/ray/swifts.md"].chunk_texts[0]
    assert SECRET not in result.stderr + result.stdout + logs
