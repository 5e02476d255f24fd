"""The pipeline a job runs through, built once when the ingester starts (docs/design.md, "The ingester").

``IngesterApp.start`` opens the queue, then builds the engine (conversion and
the encoder), the embedding batcher and the job processor over them, and hands
the worker pool this one frozen ``Pipeline``: nothing in it is replaced while
the ingester runs, and nothing is missing once it is started. Databases come
and go with a reload; the pipeline serves them all.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass

from haiku.core.config import AppConfig
from haiku.ingester.logs import get_logger
from haiku.ingester.metrics import IngesterMetrics
from haiku.ingester.pipeline.embed import EmbedBatcher
from haiku.ingester.pipeline.engine import Engine, build_engine
from haiku.ingester.pipeline.pictures import picture_describer
from haiku.ingester.pipeline.process import JobProcessor
from haiku.ingester.queue import IngestQueue


class Warmup:
    """Starting the conversion workers and loading the model, in the background, once.

    Begun when the first job is claimed (or at once by ``serve``): a batch with
    nothing to do never pays for docling and torch.
    """

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._task: asyncio.Task | None = None

    def begin(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._warm(), name="warm-up")

    @property
    def done(self) -> bool:
        """The conversion workers are started and the model loading has ended."""
        return self._task is not None and self._task.done()

    async def _warm(self) -> None:
        await self._engine.converter.start()
        load = getattr(self._engine.embedder, "prepare_document_encoder", None)
        if load is not None:
            try:
                await asyncio.to_thread(load)
            except Exception as exc:  # reported again by the first job that embeds
                get_logger().error("the embedding model did not load", error=str(exc))

    async def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task


@dataclass(frozen=True)
class Pipeline:
    """The queue and what runs its jobs: one of each for every database the ingester serves."""

    queue: IngestQueue
    engine: Engine  # convert a file, embed texts: local or on a Ray cluster
    batcher: EmbedBatcher
    processor: JobProcessor
    warmup: Warmup
    metrics: IngesterMetrics  # what the pipeline did, for /metrics and --metrics-file (docs/operations.md)
    wake: asyncio.Event  # set when there may be a job to claim

    async def stop(self) -> None:
        """Stop warming, the batcher, the processor (its pending writes) and the engine.

        The queue stays open: the app closes it last, after the databases.
        """
        await self.warmup.cancel()
        await self.batcher.close()
        await self.processor.close()
        await self.engine.close()


def build_pipeline(config: AppConfig, queue: IngestQueue, metrics: IngesterMetrics, wake: asyncio.Event) -> Pipeline:
    """The pipeline over an open queue; the engine's workers and model start on ``Warmup.begin``."""
    describer = picture_describer(config)
    batcher: EmbedBatcher | None = None  # the engine asks it whether conversion starves the encoder
    engine = build_engine(config, starving=lambda: batcher is not None and batcher.starving())
    embedder = engine.embedder
    batcher = EmbedBatcher(embedder, pool_size=4 * embedder.batch_size, observe=metrics.embedded)
    batcher.start()
    processor = JobProcessor(
        sync=queue.sync,
        pool=engine.converter,
        batcher=batcher,
        describer=describer,
        metrics=metrics,
    )
    return Pipeline(queue, engine, batcher, processor, Warmup(engine), metrics, wake)
