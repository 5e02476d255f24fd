"""The processing identity a database records (docs/storage.md, "The processing identity").

The settings record keeps, beside the embedder identity, a JSON object naming
how the stored documents were converted and chunked. What goes in it is the
caller's (the ingester computes it from its configuration); the store only
keeps it, in one settings commit under the writer lock.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from haiku.core.store.gate import WriteGate
from haiku.core.store.handles import Handles


class ProcessingRecord:
    """Reads and records the processing identity of one database."""

    def __init__(self, handles: Handles, gate: WriteGate) -> None:
        self.handles = handles
        self.gate = gate

    @property
    def identity(self) -> dict[str, Any] | None:
        """As recorded; ``None`` for a database that never recorded one (or one before schema version 3)."""
        return self.handles.settings.processing

    async def record(self, identity: dict[str, Any]) -> None:
        """Record ``identity`` (a JSON object) in one settings commit."""
        if not isinstance(identity, dict):
            raise TypeError(f"a processing identity is a JSON object (dict), not {type(identity).__name__}")
        async with self.gate.writing("recording the processing identity"):
            current = await self.handles.read_settings()
            await self.handles.write_settings(replace(current, processing=dict(identity)))
        self.gate.written()
