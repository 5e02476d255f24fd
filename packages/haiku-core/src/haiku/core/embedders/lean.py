"""Plain sentence-transformers models run with transformers alone.

Most sentence-transformers models, all-MiniLM-L6-v2 among them, are a
transformer, a pooling step and a normalisation. Importing the
sentence-transformers package for them costs about 110 MiB of memory in every
process that embeds (it pulls in libraries a plain model never uses), which
matters to a daemon that holds the model all day. This module runs such a
model the way sentence-transformers does (same tokenisation, truncation,
pooling and normalisation, texts batched longest first), and says ``None``
for any other layout, which then loads through sentence-transformers.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from haiku.core.embedders import batching
from haiku.core.embedders.batching import batches, forward_passes, longest_first, model_texts
from haiku.core.embedders.tokenizing import AheadTokenizer

_TRANSFORMER = "sentence_transformers.models.Transformer"
_POOLING = "sentence_transformers.models.Pooling"
_NORMALIZE = "sentence_transformers.models.Normalize"
_POOLING_MODES = ("pooling_mode_mean_tokens", "pooling_mode_cls_token")


def plain_layout(path: str | Path) -> dict[str, Any] | None:
    """The settings of a transformer → mean or CLS pooling (→ normalise) model at ``path``, else ``None``.

    Whether the model normalises does not matter: the embedder always does.
    """
    root = Path(path)
    try:
        modules = json.loads((root / "modules.json").read_text(encoding="utf-8"))
        types = [module["type"] for module in sorted(modules, key=lambda m: m["idx"])]
        if types not in ([_TRANSFORMER, _POOLING], [_TRANSFORMER, _POOLING, _NORMALIZE]):
            return None
        if modules[0].get("path", "") != "":
            return None
        pooling = json.loads((root / modules[1]["path"] / "config.json").read_text(encoding="utf-8"))
        settings_file = root / "sentence_bert_config.json"
        settings = json.loads(settings_file.read_text(encoding="utf-8")) if settings_file.exists() else {}
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None
    modes = [mode for mode, enabled in pooling.items() if mode.startswith("pooling_mode") and enabled]
    if len(modes) != 1 or modes[0] not in _POOLING_MODES:
        return None
    return {
        "pooling": "mean" if modes[0] == "pooling_mode_mean_tokens" else "cls",
        "max_seq_length": settings.get("max_seq_length"),
        "do_lower_case": bool(settings.get("do_lower_case", False)),
        "dimension": pooling.get("word_embedding_dimension"),
    }


class LeanSentenceEncoder:
    """A plain sentence-transformers model (see ``plain_layout``) on transformers and torch.

    On ``device`` (``cpu``, ``cuda:N``, ``mps``) in ``precision`` (``fp32``,
    ``fp16``, ``bf16``; pooling and normalisation always in fp32). Batches are
    tokenized ahead on ``tokenizer_threads`` threads (``tokenizing``) and run as
    forward passes within the device's token budget (``batching``); a pass that
    runs out of device memory is halved and run again.
    """

    def __init__(
        self, model: Any, tokenizer: Any, layout: dict[str, Any], *,
        device: str = "cpu", precision: str = "fp32", tokenizer_threads: int = 1,
    ) -> None:
        from haiku.core.embedders.device import torch_dtype

        self._device = device
        self._precision = precision
        self._model = model.eval().to(device=device, dtype=torch_dtype(precision))
        self._layout = layout
        limit = layout["max_seq_length"] or tokenizer.model_max_length
        self._max_length = min(limit, tokenizer.model_max_length)
        self._tokens = AheadTokenizer(tokenizer, self._max_length, tokenizer_threads)
        self._budget = batching.forward_token_budget(device)
        self.halvings = 0  # passes cut in half after running out of device memory

    @classmethod
    def load(cls, path: str, layout: dict[str, Any], **placement: Any) -> LeanSentenceEncoder:
        """The model saved at ``path``, on the device and in the precision ``placement`` names."""
        from transformers import AutoModel, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        return cls(AutoModel.from_pretrained(path, local_files_only=True), tokenizer, layout, **placement)

    @property
    def dimension(self) -> int:
        return int(self._layout["dimension"] or self._model.config.hidden_size)

    @property
    def device(self) -> str:
        return self._device

    @property
    def precision(self) -> str:
        return self._precision

    @property
    def forward_budget(self) -> int:
        """Padded tokens a forward pass holds now (halved after each out-of-memory error)."""
        return self._budget

    @property
    def tokenizer(self) -> AheadTokenizer:
        return self._tokens

    def encode(self, texts: Sequence[str], batch_size: int) -> list[list[float]]:
        """Unit vectors in the order of ``texts`` (the embedder always normalises, whatever the model)."""
        import torch

        cleaned = model_texts(texts, self._layout["do_lower_case"])
        out: list[list[float]] = [[] for _ in cleaned]
        with torch.inference_mode():
            for indexes, features in self._tokens.ahead(list(batches(longest_first(cleaned), batch_size)), cleaned):
                for rows, vectors in self._forward(features):
                    for index, vector in zip(indexes[rows], vectors.tolist(), strict=True):
                        out[index] = vector
        return out

    def _forward(self, features: dict[str, Any]):
        """(row slice, unit vectors on the CPU) per forward pass (``batching.forward_passes``).

        A pass that runs out of device memory is run again as two, and the
        budget stays halved for the passes after it.
        """
        lengths = [int(n) for n in features["attention_mask"].sum(axis=1).tolist()]
        start = 0
        while start < len(lengths):
            first, width = next(forward_passes(lengths[start:], self._budget))
            rows = slice(start, start + first.stop)
            try:
                vectors = self._run({name: value[rows, :width] for name, value in features.items()})
            except Exception as exc:
                if not out_of_memory(exc):
                    raise
                self._after_out_of_memory(rows.stop - rows.start, width, exc)
                continue
            yield rows, vectors
            start = rows.stop

    def _run(self, part: dict[str, Any]) -> Any:
        import torch

        tensors = {name: torch.from_numpy(value).to(self._device) for name, value in part.items()}
        tokens = self._model(**tensors, return_dict=False)[0]
        pooled = self._pool(tokens.float(), tensors["attention_mask"])
        return torch.nn.functional.normalize(pooled, p=2, dim=1).cpu()

    def _after_out_of_memory(self, rows: int, width: int, exc: BaseException) -> None:
        from haiku.core.embedders.errors import EmbeddingError

        if rows <= 1:
            raise EmbeddingError(
                f"{self._device} ran out of memory embedding one text of {width} tokens: {exc}"
            ) from exc
        self._budget = max(1, rows * width // 2)
        self.halvings += 1
        _release_device_memory(self._device)

    def _pool(self, tokens: Any, mask: Any) -> Any:
        if self._layout["pooling"] == "cls":
            return tokens[:, 0]
        weights = mask.unsqueeze(-1).to(tokens.dtype)
        return (tokens * weights).sum(1) / weights.sum(1).clamp(min=1e-9)


def out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` is the device's allocator refusing (CUDA's ``OutOfMemoryError``, MPS's message)."""
    import torch

    kind = getattr(torch, "OutOfMemoryError", None) or getattr(torch.cuda, "OutOfMemoryError", None)
    if kind is not None and isinstance(exc, kind):
        return True
    return isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()


def _release_device_memory(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.empty_cache()
    elif device == "mps" and hasattr(torch, "mps"):
        torch.mps.empty_cache()
