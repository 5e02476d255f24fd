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
