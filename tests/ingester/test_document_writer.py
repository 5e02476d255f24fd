"""Document writes batched per database (``DocumentWriter``), into a real store."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from haiku.core.models import Chunk, Document
from haiku.core.scope import DatabaseRef
from haiku.core.store import Store
from haiku.ingester.pipeline.writer import DocumentWriter

DIM = 384


class CountingStore:
    """The real store, counting the batch writes its writer is handed (the count is what these tests read)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.batches: list[int] = []

    def writer(self):
        return dataclasses.replace(self.store.writer(), documents=self)

    async def upsert_documents(self, items):
        self.batches.append(len(items))
        return await self.store.writer().documents.upsert_documents(items)


@pytest.fixture
async def store(tmp_path, make_config):
    config = make_config()
    opened = await Store.open(
        DatabaseRef.configured("papers", tmp_path / "papers.lancedb"), config, create=True
    )
    yield CountingStore(opened)
    await opened.close()


def document(n: int, dim: int = DIM) -> tuple[Document, list[Chunk], list[list[float]]]:
    vector = [0.0] * dim
    vector[n % dim] = 1.0
    return (
        Document(uri=f"file:///{n}.md", content=f"text {n}"),
        [Chunk(content=f"text {n}", order=0)],
        [vector],
    )


def locks():
    held: dict[str, asyncio.Lock] = {}
    return lambda name: held.setdefault(name, asyncio.Lock())


async def test_documents_handed_in_together_are_written_in_one_call(store):
    writer = DocumentWriter(locks())
    stored = await asyncio.gather(*(writer.write("papers", store, *document(n)) for n in range(6)))
    assert store.batches == [6]
    assert [d.uri for d in stored] == [f"file:///{n}.md" for n in range(6)]
    assert await store.store.reads.count_documents() == 6


async def test_a_batch_holds_at_most_max_batch_documents(store):
    writer = DocumentWriter(locks(), max_batch=4)
    await asyncio.gather(*(writer.write("papers", store, *document(n)) for n in range(10)))
    assert store.batches == [4, 4, 2]


async def test_writes_arriving_during_a_write_go_in_the_next_batch(store):
    writer = DocumentWriter(locks())
    first = asyncio.create_task(writer.write("papers", store, *document(0)))
    await asyncio.sleep(0)  # the writer starts on the first document alone
    await asyncio.sleep(0)
    later = [asyncio.create_task(writer.write("papers", store, *document(n))) for n in range(1, 4)]
    await asyncio.gather(first, *later)
    assert store.batches == [1, 3]


async def test_a_failed_batch_fails_only_the_job_whose_document_is_bad(store):
    writer = DocumentWriter(locks())
    results = await asyncio.gather(
        writer.write("papers", store, *document(0)),
        writer.write("papers", store, *document(1, dim=3)),  # wrong vector dimension
        writer.write("papers", store, *document(2)),
        return_exceptions=True,
    )
    assert isinstance(results[1], ValueError)
    assert [r.uri for r in (results[0], results[2])] == ["file:///0.md", "file:///2.md"]
    assert await store.store.reads.count_documents() == 2
