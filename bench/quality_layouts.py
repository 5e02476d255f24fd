"""How the quality benchmark spreads one corpus over databases.

A layout is a list of weights, one per database. Documents are ordered by the
SHA-256 of their id (a fixed pseudo-random order that does not depend on the
corpus file's order or on Python's hash seed) and cut into consecutive parts
whose sizes follow the weights, rounded by largest remainder so they sum to the
corpus size.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Layout:
    name: str
    weights: tuple[float, ...]

    @property
    def databases(self) -> int:
        return len(self.weights)

    def database_names(self) -> list[str]:
        return [f"{self.name}-{i + 1}" for i in range(self.databases)]


LAYOUTS: tuple[Layout, ...] = (
    Layout("one", (1.0,)),
    Layout("even3", (1 / 3,) * 3),
    Layout("even10", (1 / 10,) * 10),
    Layout("uneven3", (0.70, 0.15, 0.15)),
)

LAYOUT_LABELS = {
    "one": "1 database",
    "even3": "3 even",
    "even10": "10 even",
    "uneven3": "3 uneven (70/15/15)",
}


def part_sizes(total: int, weights: Sequence[float]) -> list[int]:
    """Sizes proportional to weights, summing to total (largest remainder)."""
    if not weights or any(w <= 0 for w in weights):
        raise ValueError(f"weights must be positive, got {list(weights)}")
    scale = total / sum(weights)
    exact = [w * scale for w in weights]
    sizes = [int(x) for x in exact]
    by_remainder = sorted(range(len(weights)), key=lambda i: (-(exact[i] - sizes[i]), i))
    for i in by_remainder[: total - sum(sizes)]:
        sizes[i] += 1
    return sizes


def stable_order(ids: Sequence[str]) -> list[int]:
    """Indexes of ids ordered by SHA-256 of the id."""
    return sorted(range(len(ids)), key=lambda i: hashlib.sha256(ids[i].encode("utf-8")).hexdigest())


def split(items: Sequence[T], ids: Sequence[str], weights: Sequence[float]) -> list[list[T]]:
    """Items cut into len(weights) parts by the stable order of their ids."""
    if len(items) != len(ids):
        raise ValueError("one id per item")
    order = stable_order(ids)
    parts: list[list[T]] = []
    start = 0
    for size in part_sizes(len(items), weights):
        parts.append([items[i] for i in order[start : start + size]])
        start += size
    return parts
