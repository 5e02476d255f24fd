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

from haiku.core.embedders.batching import batches, forward_passes, longest_first, model_texts

_TRANSFORMER = "sentence_transformers.models.Transformer"
_POOLING = "sentence_transformers.models.Pooling"
_NORMALIZE = "sentence_transformers.models.Normalize"
_POOLING_MODES = ("pooling_mode_mean_tokens", "pooling_mode_cls_token")
# Padded tokens per forward pass. A batch of 64 texts of 256 tokens holds about
# 1 GiB of activations at once (attention and feed-forward, every layer); run
# as four passes of 16 it holds about 250 MiB and encodes as fast on a CPU
# (measured: 10.4-12.4 s against 10.3-13.3 s for 192 such texts, peak RSS
# 571-642 MiB against 943-1,085 MiB). Short texts still go 64 to a pass.
FORWARD_TOKEN_BUDGET = 4096


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
    """A plain sentence-transformers model (see ``plain_layout``) on transformers and torch."""

    def __init__(self, path: str, layout: dict[str, Any]) -> None:
        from transformers import AutoModel, AutoTokenizer

        self._tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        self._model = AutoModel.from_pretrained(path, local_files_only=True).eval()
        self._layout = layout
        limit = layout["max_seq_length"] or self._tokenizer.model_max_length
        self._max_length = min(limit, self._tokenizer.model_max_length)

    @property
    def dimension(self) -> int:
        return int(self._layout["dimension"] or self._model.config.hidden_size)

    def encode(self, texts: Sequence[str], batch_size: int) -> list[list[float]]:
        """Unit vectors in the order of ``texts`` (the embedder always normalises, whatever the model)."""
        import torch

        cleaned = model_texts(texts, self._layout["do_lower_case"])
        out: list[list[float]] = [[] for _ in cleaned]
        with torch.inference_mode():
            for indexes in batches(longest_first(cleaned), batch_size):
                features = self._tokenizer(
                    [cleaned[i] for i in indexes],
                    padding=True,
                    truncation="longest_first",
                    return_tensors="pt",
                    max_length=self._max_length,
                )
                for rows, vectors in self._forward(features):
                    vectors = torch.nn.functional.normalize(vectors, p=2, dim=1)
                    for index, vector in zip(indexes[rows], vectors.float().tolist(), strict=True):
                        out[index] = vector
        return out

    def _forward(self, features: Any):
        """(row slice, pooled vectors) per forward pass (``batching.forward_passes``)."""
        lengths = [int(n) for n in features["attention_mask"].sum(dim=1).tolist()]
        for rows, width in forward_passes(lengths, FORWARD_TOKEN_BUDGET):
            part = {name: value[rows, :width] for name, value in features.items()}
            tokens = self._model(**part, return_dict=False)[0]
            yield rows, self._pool(tokens, part["attention_mask"])

    def _pool(self, tokens: Any, mask: Any) -> Any:
        if self._layout["pooling"] == "cls":
            return tokens[:, 0]
        weights = mask.unsqueeze(-1).to(tokens.dtype)
        return (tokens * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
