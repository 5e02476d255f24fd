"""Fixtures for the haiku-core tests: store databases and a local S3 server.

Vectors: tests where the embedding model is not the point use ``fake_vector``,
a deterministic bag-of-words hash into 384 normalised dimensions (texts that
share words are close). Tests about real retrieval use the session
``embedder`` fixture from tests/conftest.py.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import re
import socket
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

DIM = 384
BUCKET = "haiku-test"


def fake_vector(text: str, dim: int = DIM) -> list[float]:
    """A unit vector hashing each word of ``text`` into one dimension."""
    values = [0.0] * dim
    for word in re.findall(r"\w+", text.lower()):
        digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
        values[int.from_bytes(digest, "big") % dim] += 1.0
    norm = math.sqrt(sum(v * v for v in values))
    if norm == 0:
        values[0], norm = 1.0, 1.0
    return [v / norm for v in values]


@pytest.fixture(scope="session")
def read_while_writing() -> Callable[..., Awaitable[None]]:
    """``await read_while_writing(write, read, rounds)``: ``write(n)`` for n = 1 … rounds - 1
    while ``read()`` runs over and over, yielding to the writer between reads, until the writes end."""

    async def run(write: Callable[[int], Awaitable[Any]], read: Callable[[], Awaitable[None]], rounds: int) -> None:
        done = asyncio.Event()

        async def keep_writing() -> None:
            try:
                for n in range(1, rounds):
                    await write(n)
            finally:
                done.set()

        async def keep_reading() -> None:
            while not done.is_set():
                await read()
                await asyncio.sleep(0)

        await asyncio.gather(keep_writing(), keep_reading())

    return run


@pytest.fixture(scope="session")
def fake_embed() -> Callable[..., list[float]]:
    return fake_vector


@pytest.fixture
def db_config(tmp_path: Path, make_config) -> Callable[..., Any]:
    """``db_config(*names, **overrides)``: a config naming local databases under tmp_path.

    Each name maps to ``tmp_path/<name>.lancedb``; overrides are config sections.
    """

    def build(*names: str, **sections: Any):
        sections.setdefault("lancedb", {})
        sections["lancedb"].setdefault(
            "databases", {name: str(tmp_path / f"{name}.lancedb") for name in names}
        )
        sections["lancedb"].setdefault("read_consistency_interval_seconds", 0)
        return make_config(**sections)

    return build


@pytest.fixture
async def store(db_config):
    """An empty writable database named papers (a module with its own corpus overrides it)."""
    from haiku.core.scope import DatabaseScope
    from haiku.core.store import Store

    config = db_config("papers")
    opened = await Store.open(DatabaseScope.resolve(config).databases[0], config, create=True)
    yield opened
    await opened.close()


@pytest.fixture
def write_doc(fake_embed) -> Callable[..., Any]:
    """``await write_doc(store, uri, *chunk_texts, title=None, metadata=None)``: upsert a document."""
    from haiku.core.models import Chunk, Document

    async def write(store, uri: str, *texts: str, title: str | None = None, metadata: dict | None = None):
        chunks = [Chunk(content=text, order=i) for i, text in enumerate(texts)]
        document = Document(uri=uri, title=title or uri, content="\n\n".join(texts), metadata=metadata or {})
        return await store.writer().documents.upsert_document(document, chunks, [fake_embed(t) for t in texts])

    return write


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def s3_server() -> Iterator[dict[str, str]]:
    """A moto S3 server on 127.0.0.1 with one bucket; yields the storage_options to reach it."""
    import boto3
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    options = {
        "aws_endpoint": endpoint,
        "aws_access_key_id": "testing",
        "aws_secret_access_key": "testing",
        "aws_region": "us-east-1",
        "allow_http": "true",
    }
    boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    ).create_bucket(Bucket=BUCKET)
    try:
        yield options
    finally:
        server.stop()


@pytest.fixture
def s3_config(s3_server, make_config) -> Callable[..., Any]:
    """``s3_config(*names)``: a config naming databases in a fresh prefix of the moto bucket."""
    prefix = uuid.uuid4().hex[:12]

    def build(*names: str, **sections: Any):
        sections.setdefault("lancedb", {})
        sections["lancedb"].setdefault(
            "databases", {name: f"s3://{BUCKET}/{prefix}/{name}.lancedb" for name in names}
        )
        sections["lancedb"].setdefault("storage_options", dict(s3_server))
        sections["lancedb"].setdefault("read_consistency_interval_seconds", 0)
        return make_config(**sections)

    return build
