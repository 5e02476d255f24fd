"""A persistent text → vector cache for the benchmarks.

Embedding SciFact takes many minutes on a laptop CPU; every layout of the
quality benchmark stores the same chunks, so each text is embedded once and
reused. Entries are keyed by the embedder identity and the SHA-256 of the exact
text embedded, so a change of model or of chunk text can never return a stale
vector.

Layout under ``root/<provider>__<model>__<dim>/``: ``keys.txt`` (one hex digest
a line) and ``vectors.f32`` (row i = the float32 vector of line i). Both are
appended batch by batch, vectors first, so an interrupted run keeps everything
it finished; on load the shorter of the two decides how many rows are valid.
"""

from __future__ import annotations

import hashlib
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _slug(value: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", value)


class EmbeddingCache:
    """Vectors for texts already embedded by one embedder identity."""

    def __init__(self, root: Path, *, provider: str, model: str, vector_dim: int) -> None:
        self.dim = vector_dim
        self.dir = Path(root) / f"{_slug(provider)}__{_slug(model)}__{vector_dim}"
        self.dir.mkdir(parents=True, exist_ok=True)
        self._keys_path = self.dir / "keys.txt"
        self._vectors_path = self.dir / "vectors.f32"
        self._rows: dict[str, int] = {}
        self._vectors = np.zeros((0, vector_dim), dtype=np.float32)
        self._load()

    @classmethod
    def for_embedder(cls, root: Path, embedder: Any) -> EmbeddingCache:
        identity = embedder.identity
        return cls(root, provider=identity.provider, model=identity.model, vector_dim=identity.vector_dim)

    def _load(self) -> None:
        keys = self._keys_path.read_text().split() if self._keys_path.exists() else []
        raw = np.fromfile(self._vectors_path, dtype=np.float32) if self._vectors_path.exists() else np.zeros(0)
        rows = min(len(keys), raw.size // self.dim)
        if rows < len(keys) or rows * self.dim < raw.size:
            # A torn append: keep the rows both files agree on and truncate the rest.
            self._vectors_path.write_bytes(raw[: rows * self.dim].astype(np.float32).tobytes())
            self._keys_path.write_text("".join(f"{k}\n" for k in keys[:rows]))
        self._vectors = raw[: rows * self.dim].astype(np.float32).reshape(rows, self.dim)
        self._rows = {key: i for i, key in enumerate(keys[:rows])}

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, text: str) -> bool:
        return text_key(text) in self._rows

    def missing(self, texts: Sequence[str]) -> list[str]:
        """Distinct texts not cached yet, in first-seen order."""
        seen: set[str] = set()
        out: list[str] = []
        for text in texts:
            key = text_key(text)
            if key not in self._rows and key not in seen:
                seen.add(key)
                out.append(text)
        return out

    def get(self, texts: Sequence[str]) -> np.ndarray:
        """Cached vectors for texts, in order; KeyError names the first text missing."""
        rows = []
        for text in texts:
            row = self._rows.get(text_key(text))
            if row is None:
                raise KeyError(f"not in the embedding cache: {text[:80]!r}")
            rows.append(row)
        return self._vectors[rows]

    def add(self, texts: Sequence[str], vectors: np.ndarray | Sequence[Sequence[float]]) -> None:
        array = np.asarray(vectors, dtype=np.float32)
        if array.shape != (len(texts), self.dim):
            raise ValueError(f"expected {len(texts)} vectors of {self.dim} dims, got shape {array.shape}")
        fresh = [(i, text_key(t)) for i, t in enumerate(texts) if text_key(t) not in self._rows]
        if not fresh:
            return
        # Collapse duplicates within the batch.
        unique: dict[str, int] = {}
        for i, key in fresh:
            unique.setdefault(key, i)
        index = list(unique.values())
        with self._vectors_path.open("ab") as fh:
            fh.write(array[index].tobytes())
        with self._keys_path.open("a") as fh:
            fh.write("".join(f"{key}\n" for key in unique))
        start = len(self._rows)
        self._vectors = np.concatenate([self._vectors, array[index]])
        for offset, key in enumerate(unique):
            self._rows[key] = start + offset

    def fill(
        self,
        texts: Sequence[str],
        encode: Callable[[list[str]], Sequence[Sequence[float]]],
        *,
        batch_size: int = 64,
        log: Callable[[str], None] | None = None,
    ) -> int:
        """Embed and store every text not cached yet; returns how many were embedded.

        Long texts go first within the to-do list so batches hold texts of similar
        length (less padding), and progress is logged after each batch.
        """
        todo = sorted(self.missing(texts), key=len, reverse=True)
        log = log or (lambda line: print(line, file=sys.stderr, flush=True))
        if not todo:
            return 0
        started = time.perf_counter()
        for start in range(0, len(todo), batch_size):
            batch = todo[start : start + batch_size]
            self.add(batch, encode(batch))
            done = start + len(batch)
            elapsed = time.perf_counter() - started
            rate = done / elapsed if elapsed else 0.0
            eta = (len(todo) - done) / rate if rate else 0.0
            log(f"embedded {done}/{len(todo)} texts ({rate:.1f}/s, about {eta:.0f}s left)")
        return len(todo)
