"""A document's outline, read off its chunks' headings.

Each distinct heading path is a section, numbered in reading order from 1; a
section holds every chunk under its heading, subsections included.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from haiku.core.models import Chunk


@dataclass
class Section:
    section_id: str
    level: int
    heading: str
    path: tuple[str, ...]
    chunks: list[Chunk] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {
            "section_id": self.section_id,
            "level": self.level,
            "heading": self.heading,
            "path": list(self.path),
            "chunk_ids": [c.id for c in self.chunks],
        }

    def text(self) -> str:
        parts = [f"Section {self.section_id}: {' > '.join(self.path)}"]
        for chunk in self.chunks:
            parts.append(f"\nChunk ID: {chunk.id}\n{chunk.content}")
        return "\n".join(parts)


def outline(chunks: Sequence[Chunk]) -> list[Section]:
    sections: list[Section] = []
    by_path: dict[tuple[str, ...], Section] = {}
    for chunk in sorted(chunks, key=lambda c: c.order):
        path = tuple(h for h in chunk.headings if h and h.strip())
        for depth in range(1, len(path) + 1):
            prefix = path[:depth]
            section = by_path.get(prefix)
            if section is None:
                section = Section(str(len(sections) + 1), depth, prefix[-1], prefix)
                sections.append(section)
                by_path[prefix] = section
            section.chunks.append(chunk)
    return sections
