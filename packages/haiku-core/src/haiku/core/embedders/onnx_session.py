"""What the ONNX query and document encoders share: the tokenizer, the session, the pooling.

Both run one export (``haiku.core.embedders.onnx_query``); they differ only in
the session options (one thread for a query, every core for a batch of
documents) and in how many texts a forward pass holds.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from haiku.core.embedders.onnx_manifest import MODEL_FILE, TOKENIZER_FILE, check_inputs


def export_tokenizer(folder: Path, manifest: dict[str, Any]) -> Any:
    """The model's own tokenizer, truncating as the torch encoder does, padding nothing."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(folder / TOKENIZER_FILE))
    tokenizer.enable_truncation(max_length=int(manifest["max_length"]))
    tokenizer.no_padding()
    return tokenizer


def export_session(folder: Path, manifest: dict[str, Any], configure: Callable[[Any], None]) -> Any:
    """An ONNX Runtime session of the export, its options set by ``configure``, its inputs checked."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # no optimiser chatter on stderr
    if manifest.get("optimized_by") == onnxruntime.__version__:
        # Optimised at export by this same ONNX Runtime: redoing it costs ~20 ms of every start.
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    configure(options)
    session = onnxruntime.InferenceSession(
        str(folder / MODEL_FILE), sess_options=options, providers=["CPUExecutionProvider"]
    )
    check_inputs(list(manifest["inputs"]), [graph_input.name for graph_input in session.get_inputs()])
    return session


def unit_vectors(tokens: Any, mask: Any, pooling: str) -> Any:
    """Pooled (mean over the unmasked tokens, or the first token) and normalised rows, float32."""
    import numpy as np

    if pooling == "cls":
        pooled = tokens[:, 0].astype(np.float64)
    else:
        weights = mask[..., None].astype(np.float32)
        pooled = ((tokens * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)).astype(np.float64)
    pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
    return pooled.astype(np.float32)
