"""The document encoder on ONNX Runtime: the query encoder's export, run in batches.

The ingester daemon embeds every chunk it writes. With torch that process held
760-990 MiB all day (torch, transformers and the model); with the model's ONNX
export (``haiku.core.embedders.onnx_query``) run by ONNX Runtime it never
imports torch, and the export itself is made in a child process
(``haiku.core.embedders.onnx_export``). Texts are batched exactly as the torch
encoder batches them (``haiku.core.embedders.batching``), so the vectors agree
with torch's to a cosine of at least 0.9999 and the recorded embedder identity
is the same: a database embedded by either is valid for the other.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from haiku.core.embedders.batching import batches, forward_passes, longest_first, model_texts
from haiku.core.embedders.onnx_manifest import verified_manifest
from haiku.core.embedders.onnx_session import export_session, export_tokenizer, unit_vectors

# Padded tokens per forward pass: a quarter of the torch encoder's, which
# bounds the peak of a batch of long texts at no cost in CPU (_release_options
# has the measured figures).
FORWARD_TOKEN_BUDGET = 1024
# ONNX Runtime's own memory arena, shrunk after each call (_release_options).
MEMORY_ARENA = True


def open_document_export(folder: Path, layout: dict[str, Any]) -> OnnxDocumentEncoder:
    """The document encoder of a finished export, once it is checked (``onnx_manifest.verified_manifest``)."""
    return OnnxDocumentEncoder(folder, verified_manifest(folder, layout))


class OnnxDocumentEncoder:
    """Runs an exported plain model over batches of texts: tokenize, forward passes, pool, normalise."""

    def __init__(self, folder: Path, manifest: dict[str, Any]) -> None:
        self._pooling: str = manifest["pooling"]
        self._lowercase: bool = manifest["do_lower_case"]
        self._inputs: list[str] = manifest["inputs"]
        self.dimension: int = manifest["dimension"]
        self._tokenizer = export_tokenizer(folder, manifest)
        self._session = export_session(folder, manifest, _batch_options)
        self._release_after = _release_options() if MEMORY_ARENA else None  # no arena: nothing to shrink

    def encode(self, texts: Sequence[str], batch_size: int) -> list[list[float]]:
        """Unit vectors in the order of ``texts``, batched as the torch encoder batches them."""
        import numpy as np

        cleaned = model_texts(texts, self._lowercase)
        passes: list[tuple[Sequence[int], list[Any], int]] = []
        for indexes in batches(longest_first(cleaned), batch_size):
            encodings = self._tokenizer.encode_batch([cleaned[i] for i in indexes])
            for rows, width in forward_passes([len(e.ids) for e in encodings], FORWARD_TOKEN_BUDGET):
                passes.append((indexes[rows], encodings[rows], width))
        out: list[list[float]] = [[] for _ in cleaned]
        for number, (targets, part, width) in enumerate(passes, start=1):
            # Padding is masked out of attention and pooling, so its token id does not matter.
            feeds = {name: np.zeros((len(part), width), dtype=np.int64) for name in self._inputs}
            feeds.setdefault("attention_mask", np.zeros((len(part), width), dtype=np.int64))
            for row, encoding in enumerate(part):
                n = len(encoding.ids)
                feeds["attention_mask"][row, :n] = encoding.attention_mask
                if "input_ids" in feeds:
                    feeds["input_ids"][row, :n] = encoding.ids
                if "token_type_ids" in feeds:
                    feeds["token_type_ids"][row, :n] = encoding.type_ids
            release = self._release_after if number == len(passes) else None
            (tokens,) = self._session.run(None, {name: feeds[name] for name in self._inputs}, release)
            vectors = unit_vectors(tokens, feeds["attention_mask"], self._pooling)
            for index, vector in zip(targets, vectors.tolist(), strict=True):
                out[index] = vector
        return out


def _batch_options(options: Any) -> None:
    # Documents come in batches: every core works on one forward pass (a query
    # encoder keeps one thread), and weights are pre-packed for the batched
    # kernels. The threads sleep rather than spin between operators: the daemon
    # shares the cores with the conversion workers (12.5 against 13.0 CPU
    # seconds for 192 texts of 256 tokens, no slower).
    options.intra_op_num_threads = max(1, os.cpu_count() or 1)
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.enable_cpu_mem_arena = MEMORY_ARENA


def _release_options() -> Any:
    """Run options that hand the arena's free memory back after a call's last forward pass.

    Measured (bench/document_encoder.py: 192 texts of 256 tokens, batches of
    64; RSS 133 MiB once loaded; 2 loaded cores, where CPU seconds vary by
    30% between runs, so only the memory gaps count):

    ====================================  ========  ===========  ===========
    session                               peak RSS  RSS after    CPU seconds
    ====================================  ========  ===========  ===========
    arena, 4,096-token passes (defaults)  530 MiB   530 MiB      17-19
    no arena, 4,096-token passes          612-747   432-519      18-21
    no arena, 1,024-token passes          522-543   519-542      15-20
    arena, 1,024-token passes             266       266          12.5-20
    arena, 4,096, shrunk after each call  531       204          13.5-15
    arena, 1,024, shrunk after each pass  244       186-211      13.4
    arena, 1,024, shrunk after each call  267-268   187-189      12.5-14.4
    torch encoder, 4,096-token passes     608-642   523-594      11-17
    ====================================  ========  ===========  ===========

    Without the arena the allocator keeps what it freed anyway; smaller passes
    bound the peak at no measurable cost in CPU; the shrink returns most of a
    call's working memory, and once per call costs less than once per pass.
    """
    import onnxruntime

    options = onnxruntime.RunOptions()
    options.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    return options
