"""Tokenizing ahead of the model, on a few threads (docs/configuration.md, "Devices").

On a GPU the model embeds far faster than one thread tokenizes (an H200 ran
all-MiniLM-L6-v2 at ~25,000 texts/s in fp16, where one thread tokenized
~3,400 texts/s). So the encoder hands each batch to ``AheadTokenizer``, which
cuts it into shards tokenized at once on a small pool of threads (the fast
tokenizer lets go of the interpreter lock while it works) and keeps the next
batches in flight while the device runs the current one. On a CPU one thread
suffices: the model is the slow part there.

Only numpy and tokenizers (or transformers' own tokenizer) are imported.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

# Batches tokenized ahead of the one the model runs.
LOOKAHEAD = 2
# Threads that tokenize ahead of a GPU when the tokenizer does not spread its
# calls over the cores itself (``tokenizer_parallel``).
ACCELERATOR_TOKENIZER_THREADS = 8


def available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def tokenizer_parallel() -> bool:
    """Whether the fast tokenizer spreads one call over the cores: unless ``TOKENIZERS_PARALLELISM`` says no.

    Measured on an H200 node (16 cores): one thread handing 1,024 texts at a time
    to a tokenizer that spreads them tokenized 8,107 texts/s; eight such threads
    4,319 (they contend for the same cores).
    """
    return os.environ.get("TOKENIZERS_PARALLELISM", "").strip().lower() not in ("false", "0", "no", "off")


def tokenizer_threads(device: str) -> int:
    """Threads that tokenize ahead on ``device``: one on a CPU (the model is the slow part there),
    or where the tokenizer spreads each call itself; else ``ACCELERATOR_TOKENIZER_THREADS``."""
    if device == "cpu" or tokenizer_parallel():
        return 1
    return max(1, min(ACCELERATOR_TOKENIZER_THREADS, available_cpus()))


class AheadTokenizer:
    """Texts to padded ``numpy`` features (``input_ids``, ``attention_mask``, …), ahead of the model.

    Truncates to ``max_length`` tokens and pads on the right as transformers'
    tokenizer does with ``padding=True, truncation="longest_first"``, so the
    features, and the vectors, are the same.
    """

    def __init__(self, tokenizer: Any, max_length: int, threads: int = 1) -> None:
        self._names = [n for n in tokenizer.model_input_names if n in ("input_ids", "token_type_ids", "attention_mask")]
        if "attention_mask" not in self._names:
            self._names.append("attention_mask")
        self._pad_id = int(tokenizer.pad_token_id or 0)
        self._max_length = max_length
        self._threads = max(1, threads)
        backend = getattr(tokenizer, "backend_tokenizer", None) if getattr(tokenizer, "is_fast", False) else None
        self._spec: str | None = backend.to_str() if backend is not None else None
        self._slow = tokenizer if backend is None else None
        self._local = threading.local()
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        self.threads_used: set[int] = set()  # idents of the threads that tokenized (for tests and benchmarks)

    @property
    def threads(self) -> int:
        return self._threads

    def _backend(self) -> Any:
        """This thread's own copy of the fast tokenizer: one object is never shared by two threads."""
        backend = getattr(self._local, "backend", None)
        if backend is None:
            from tokenizers import Tokenizer

            backend = Tokenizer.from_str(self._spec)
            backend.enable_truncation(max_length=self._max_length)
            backend.no_padding()
            self._local.backend = backend
        return backend

    def shard(self, texts: list[str]) -> tuple[list[list[int]], list[list[int]] | None]:
        """(token ids, token type ids or ``None`` when all are 0) of each text, unpadded."""
        self.threads_used.add(threading.get_ident())
        if self._slow is not None:
            encoded = self._slow(texts, truncation=True, max_length=self._max_length, return_token_type_ids=True)
            types = encoded.get("token_type_ids")
            return list(encoded["input_ids"]), (list(types) if types and any(map(any, types)) else None)
        encodings = self._backend().encode_batch(texts)
        # One text's type ids come from the tokenizer's template for a single text: all 0
        # for BERT-like models, so they are read only where they are not.
        if encodings and any(encodings[0].type_ids):
            return [e.ids for e in encodings], [e.type_ids for e in encodings]
        return [e.ids for e in encodings], None

    def _executor(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self._threads, thread_name_prefix="tokenize")
            return self._pool

    def _submit(self, texts: list[str]) -> list[Future]:
        size = -(-len(texts) // self._threads)
        pool = self._executor()
        return [pool.submit(self.shard, texts[i : i + size]) for i in range(0, len(texts), size)]

    def _padded(self, shards: list[Future]) -> dict[str, Any]:
        import numpy as np

        parts = [future.result() for future in shards]
        ids = [row for shard_ids, _ in parts for row in shard_ids]
        typed = any(shard_types is not None for _, shard_types in parts)
        types = [
            row for shard_ids, shard_types in parts
            for row in (shard_types if shard_types is not None else ([0] * len(r) for r in shard_ids))
        ] if typed else None
        lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
        width = int(lengths.max(initial=1)) or 1
        # Rows filled in one step: the mask of real tokens, row after row, is the order
        # of the tokens of the concatenated rows (padding on the right).
        mask = np.arange(width)[None, :] < lengths[:, None]
        total = int(lengths.sum())
        features = {"input_ids": np.full((len(ids), width), self._pad_id, dtype=np.int64)}
        features["input_ids"][mask] = np.fromiter(itertools.chain.from_iterable(ids), dtype=np.int64, count=total)
        features["attention_mask"] = mask.astype(np.int64)
        features["token_type_ids"] = np.zeros((len(ids), width), dtype=np.int64)
        if types is not None:
            features["token_type_ids"][mask] = np.fromiter(
                itertools.chain.from_iterable(types), dtype=np.int64, count=total
            )
        return {name: features[name] for name in self._names}

    def ahead(self, batches: Sequence[Sequence[int]], texts: Sequence[str]) -> Iterator[tuple[Sequence[int], dict[str, Any]]]:
        """(indexes, features) of each batch of ``texts``, in order, the next ``LOOKAHEAD`` batches
        tokenizing while the caller works on the current one."""
        waiting = iter(batches)
        pending: deque[tuple[Sequence[int], list[Future]]] = deque()

        def submit() -> None:
            indexes = next(waiting, None)
            if indexes is not None:
                pending.append((indexes, self._submit([texts[i] for i in indexes])))

        for _ in range(LOOKAHEAD + 1):
            submit()
        try:
            while pending:
                indexes, shards = pending.popleft()
                features = self._padded(shards)
                submit()
                yield indexes, features
        finally:
            for _, shards in pending:  # the caller stopped early (an error): drop what is left
                for future in shards:
                    future.cancel()

    def close(self) -> None:
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
