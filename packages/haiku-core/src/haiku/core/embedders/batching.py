"""How a local model's document texts are cut into forward passes, whatever runs the model.

The torch encoder (``haiku.core.embedders.lean``) and the ONNX one
(``haiku.core.embedders.onnx_documents``) batch the same way, so the two give
the same vectors and hold memory alike: texts sorted longest first (as
sentence-transformers does, so the texts of a batch pad to similar lengths),
``batch_size`` of them tokenized together, and each batch run as forward passes
of at most a padded-token budget, each pass cut to its own longest text
(padding is on the right, so that is the same result as padding its texts
alone).

How many texts a batch holds and how many padded tokens a forward pass holds
depend on the device (``document_batch_size``, ``forward_token_budget``):
the one rule for both, documented beside ``embeddings.batch_size`` in
docs/configuration.md.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

# Padded tokens per forward pass of the torch encoder on a CPU. A batch of 64
# texts of 256 tokens holds about 1 GiB of activations at once (attention and
# feed-forward, every layer); run as four passes of 16 it holds about 250 MiB
# and encodes as fast (measured: 10.4-12.4 s against 10.3-13.3 s for 192 such
# texts, peak RSS 571-642 MiB against 943-1,085 MiB). Short texts still go 64
# to a pass.
CPU_FORWARD_TOKEN_BUDGET = 4096
# On a GPU a pass of 16 texts is launch-bound: the card idles between small
# kernels (an H200 embedded 713 texts/s in fp16 with 16-text passes, ~3,000
# with 1,024-text passes, tokenizing in the same thread). So there a pass holds
# up to ACCELERATOR_PASS_TEXTS texts (fewer when longer than 256 tokens), and
# the ingester hands the encoder ACCELERATOR_BATCH_TEXTS at a time: several
# passes per call, so each pass's texts are tokenized while the one before runs
# (``tokenizing``). One call per 1,024 texts embedded 4,523 texts/s on an H200,
# one call of 4,096 texts 5,816 (docs/benchmarks.md, "Document encoder on a GPU").
ACCELERATOR_PASS_TEXTS = 1024
ACCELERATOR_BATCH_TEXTS = 4 * ACCELERATOR_PASS_TEXTS
ACCELERATOR_FORWARD_TOKEN_BUDGET = ACCELERATOR_PASS_TEXTS * 256


def document_batch_size(configured: int, device: str) -> int:
    """Texts one encode call takes: ``embeddings.batch_size`` on a CPU, at least ``ACCELERATOR_BATCH_TEXTS`` on a GPU."""
    return configured if device == "cpu" else max(configured, ACCELERATOR_BATCH_TEXTS)


def pipeline_step(batch_size: int, device: str) -> int:
    """Texts tokenized together and run as the passes of one step: the whole batch on a CPU,
    ``ACCELERATOR_PASS_TEXTS`` on a GPU."""
    return batch_size if device == "cpu" else min(batch_size, ACCELERATOR_PASS_TEXTS)


def forward_token_budget(device: str) -> int:
    """Padded tokens one forward pass may hold on ``device`` (a GPU halves it after running out of memory)."""
    return CPU_FORWARD_TOKEN_BUDGET if device == "cpu" else ACCELERATOR_FORWARD_TOKEN_BUDGET


def model_texts(texts: Sequence[str], lowercase: bool) -> list[str]:
    """The texts as the model reads them: stripped, and lower-cased for a model that says so."""
    cleaned = [str(text).strip() for text in texts]
    return [text.lower() for text in cleaned] if lowercase else cleaned


def longest_first(texts: Sequence[str]) -> list[int]:
    """The indexes of ``texts``, longest first (ties keep their order)."""
    return sorted(range(len(texts)), key=lambda i: -len(texts[i]))


def batches(order: Sequence[int], batch_size: int) -> Iterator[Sequence[int]]:
    """``order`` cut into runs of ``batch_size`` indexes (tokenized together)."""
    step = max(1, batch_size)
    for start in range(0, len(order), step):
        yield order[start : start + step]


def forward_passes(lengths: Sequence[int], budget: int) -> Iterator[tuple[slice, int]]:
    """(rows, width) per forward pass: consecutive rows whose count times longest length fits ``budget``.

    ``lengths`` are the token counts of a batch's rows; a row longer than the
    budget runs alone.
    """
    start = 0
    while start < len(lengths):
        stop, width = start + 1, max(lengths[start], 1)
        while stop < len(lengths) and (stop - start + 1) * max(width, lengths[stop]) <= budget:
            width = max(width, lengths[stop])
            stop += 1
        yield slice(start, stop), width
        start = stop
