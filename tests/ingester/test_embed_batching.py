"""Embedding chunk texts in pools that span documents, with the real encoder."""

from __future__ import annotations

import asyncio

import numpy as np

from haiku.ingester.pipeline.embed import EmbedBatcher


async def test_texts_of_several_documents_are_embedded_in_one_pool(embedder):
    batcher = EmbedBatcher(embedder, pool_size=64)
    batcher.start()
    try:
        with batcher.producing():  # another document is on its way: the pool waits for it
            first = asyncio.create_task(batcher.embed(["alpha one", "alpha two"]))
            await asyncio.sleep(0.05)
            second = asyncio.create_task(batcher.embed(["beta one"]))
            await asyncio.sleep(0.05)
        await asyncio.gather(first, second)
    finally:
        await batcher.close()
    assert (batcher.pools_embedded, batcher.texts_embedded) == (1, 3)


async def test_each_document_gets_its_own_vectors_back_in_order(embedder):
    batcher = EmbedBatcher(embedder, pool_size=64)
    batcher.start()
    try:
        got = await asyncio.gather(batcher.embed(["red apples", "green pears"]), batcher.embed(["blue sky"]))
    finally:
        await batcher.close()
    expected = embedder.encode(["red apples", "green pears", "blue sky"])
    assert np.allclose(np.array(got[0] + got[1]), np.array(expected), atol=1e-5)


async def test_the_encoder_is_not_starving_before_its_first_pool(embedder):
    batcher = EmbedBatcher(embedder, pool_size=64)
    assert batcher.starving(after_s=0) is False


async def test_an_idle_encoder_after_a_pool_is_starving(embedder):
    batcher = EmbedBatcher(embedder, pool_size=64)
    batcher.start()
    try:
        await batcher.embed(["one text"])
    finally:
        await batcher.close()
    assert batcher.starving(after_s=0) is True


def test_a_batch_is_the_oldest_text_with_the_texts_nearest_to_it_in_length():
    from haiku.ingester.pipeline.embed import _Request, _Text, choose_batch

    loop = asyncio.new_event_loop()
    try:
        lengths = [50, 5, 400, 48, 7, 52, 300, 49]  # arrival order; the oldest is 50 long
        request = _Request(["x" * n for n in lengths], loop.create_future())
        waiting = [_Text(request, i) for i in range(len(lengths))]
        chosen = sorted(len(t.text) for t in choose_batch(waiting, 4))
    finally:
        loop.close()
    assert chosen == [48, 49, 50, 52]


async def test_a_document_gets_its_vectors_when_its_texts_span_several_batches(embedder):
    batcher = EmbedBatcher(embedder, pool_size=2)
    batcher.batch_size = 2
    batcher.start()
    texts = ["a short one", "a much longer text about photosynthesis in plants and algae", "mid length text"]
    try:
        got = await batcher.embed(texts)
    finally:
        await batcher.close()
    assert batcher.pools_embedded == 2
    assert np.allclose(np.array(got), np.array(embedder.encode(texts)), atol=1e-5)
