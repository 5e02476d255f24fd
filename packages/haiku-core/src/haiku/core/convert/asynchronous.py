"""Converting files on disk from async code, off the event loop (docs/client.md, "Conversion").

A PDF read with OCR takes seconds of CPU; run on the event loop it would stall
every other task of an MCP server or a chat app. ``AsyncFileConverter`` runs
each step of a ``FileConverter`` in a worker thread, one at a time (the
converter is built once, on first use, and is not shared between threads).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from haiku.core.config import AppConfig
from haiku.core.convert.document import ConvertedChunk, ReadDocument
from haiku.core.convert.files import FileConverter

T = TypeVar("T")


class AsyncFileConverter:
    """``convert``, ``chunk`` and ``generate_title`` of ``FileConverter``, awaited off the event loop."""

    def __init__(self, config: AppConfig) -> None:
        self._files = FileConverter(config)
        self._one_at_a_time = threading.Lock()

    async def _off_loop(self, step: Callable[[], T]) -> T:
        def locked() -> T:
            with self._one_at_a_time:
                return step()

        return await asyncio.to_thread(locked)

    async def convert(self, path: str | Path) -> ReadDocument:
        """The file read as the ingester reads it (markdown in ``.content``); needs ``haiku-core[convert]``."""
        return await self._off_loop(lambda: self._files.convert(path))

    async def chunk(self, document: ReadDocument) -> list[ConvertedChunk]:
        """The chunks the ingester would store for a converted document."""
        return await self._off_loop(lambda: self._files.chunk(document))

    async def generate_title(self, document: ReadDocument) -> str:
        """The title the ingester would record for a converted document."""
        return await self._off_loop(lambda: self._files.generate_title(document))
