"""The engine the pipeline runs on (docs/scale-out.md): convert a file, embed texts.

Two engines implement it: ``local`` (the ingester's own conversion processes,
``ConversionPool``, and its own encoder) and ``ray`` (tasks and actors on a Ray
cluster, ``engine_ray``). Nothing above this module knows which one runs: the
job processor calls ``converter.convert`` and hands texts to an ``EmbedBatcher``
over ``embedder``; the queue, vector reuse, the revision rule and the single
writer per database stay in the ingester process whatever the engine.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from haiku.core.config import AppConfig
from haiku.core.convert import ConvertedDocument
from haiku.core.convert.files import tokenizer_dir
from haiku.core.convert.structure import StructureOptions
from haiku.core.embedders import Embedder, get_embedder
from haiku.ingester.errors import MissingExtraError

RAY_INSTALL = "pip install 'haiku-ingester[ray]'"


class FileConverter(Protocol):
    """Converts and chunks one file's bytes; ``size`` conversions may run at once."""

    size: int

    async def start(self) -> None: ...

    async def convert(
        self, *, name: str, fmt: str, data: bytes, timeout_s: float | None = None
    ) -> ConvertedDocument: ...

    async def close(self) -> None: ...


@dataclass
class Engine:
    """One engine: its converter, and the embedder the batcher sends texts to."""

    kind: str
    converter: FileConverter
    embedder: Embedder

    async def close(self) -> None:
        await self.converter.close()
        close = getattr(self.embedder, "close", None)
        if close is not None:
            await close()


def converter_settings(config: AppConfig) -> dict[str, Any]:
    """What a conversion worker needs to build its converter, whichever engine runs it."""
    return {
        "tokenizer_dir": tokenizer_dir(config),
        "chunk_size": config.processing.chunk_size,
        "ocr": config.processing.ocr,
        "pdf_layout": config.processing.pdf_layout,
        "structure": asdict(StructureOptions.from_processing(config.processing)),
    }


def ray_installed() -> bool:
    try:
        return importlib.util.find_spec("ray") is not None
    except (ImportError, ValueError):
        return False


def check_engine(config: AppConfig) -> None:
    """Refuse at start an engine whose extra is missing, saying how to install it."""
    if config.ingester.engine.type == "ray" and not ray_installed():
        raise MissingExtraError(
            f"ingester.engine.type is ray, but Ray is not installed; install it with: {RAY_INSTALL}"
        )


def build_engine(config: AppConfig, *, starving: Callable[[], bool]) -> Engine:
    """The configured engine, not started (``Engine.start`` does that, on the first job)."""
    settings = converter_settings(config)
    if config.ingester.engine.type == "ray":
        from haiku.ingester.pipeline.engine_ray import build_ray_engine

        converter, embedder = build_ray_engine(config, settings)
        return Engine("ray", converter, embedder)
    from haiku.ingester.pipeline.pool import ConversionPool

    pool = ConversionPool(
        size=config.ingester.workers.worker_count,
        initial=1,
        starving=starving,
        timeout_s=config.processing.conversion_timeout_s,
        **settings,
    )
    return Engine("local", pool, get_embedder(config))


def engine_for_run(config: AppConfig, kind: str | None, address: str | None) -> AppConfig:
    """``config`` with ``run-batch --engine/--address`` applied to ``ingester.engine`` (for this run only)."""
    from pydantic import ValidationError

    from haiku.core.config.engine import ENGINE_TYPES, LocalEngineConfig, RayEngineConfig
    from haiku.core.errors import InvalidConfigError

    if kind is None and address is None:
        return config
    current = config.ingester.engine
    kind = kind or current.type
    if kind not in ENGINE_TYPES:
        raise InvalidConfigError(f"--engine {kind}: the engines are {', '.join(ENGINE_TYPES)}")
    if kind == "local":
        if address is not None:
            raise InvalidConfigError("--address names a Ray cluster; use it with --engine ray")
        config.ingester.engine = LocalEngineConfig()
        return config
    base = current.model_dump() if isinstance(current, RayEngineConfig) else {}
    try:
        config.ingester.engine = RayEngineConfig(**{**base, **({"address": address} if address else {})})
    except ValidationError as exc:
        reason = "; ".join(str(error["msg"]) for error in exc.errors())
        raise InvalidConfigError(f"--address {address}: {reason}") from None
    return config
