"""How a local model's document texts are cut into forward passes, whatever runs the model.

The torch encoder (``haiku.core.embedders.lean``) and the ONNX one
(``haiku.core.embedders.onnx_documents``) batch the same way, so the two give
the same vectors and hold memory alike: texts sorted longest first (as
sentence-transformers does, so the texts of a batch pad to similar lengths),
``batch_size`` of them tokenized together, and each batch run as forward passes
of at most a padded-token budget, each pass cut to its own longest text
(padding is on the right, so that is the same result as padding its texts
alone).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence


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
