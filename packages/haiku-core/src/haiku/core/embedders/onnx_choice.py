"""Whether a local model's queries, or its documents, run on its ONNX export.

``embeddings.query_runtime`` and ``embeddings.document_runtime`` each take
"auto", "onnx" or "torch" (docs/configuration.md); the embedder holds one
``OnnxChoice`` per key, which decides once, on first use.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Literal

from haiku.core.embedders.errors import EmbeddingError
from haiku.core.embedders.lean import plain_layout
from haiku.core.logs import get_logger

log = get_logger("haiku.core.embedders")


class OnnxChoice:
    """Whether queries (or documents) run on the model's ONNX export, decided once, on first use.

    "torch" never looks at the export; "onnx" makes any failure an error naming
    the key; "auto" uses the export when onnxruntime is installed, the model
    has the plain layout and the export can be made, else torch, with a
    warning. Where onnxruntime or the plain layout is missing, that warning is
    given only when ``warn_unsupported`` (documents): a search would repeat it
    on every command, for a model that never had an export.
    """

    def __init__(
        self,
        key: str,
        setting: str,
        model_name: str,
        model_path: Callable[[], str],
        open_encoder: Callable[[str, dict[str, Any]], Any],
        check_dimension: Callable[[int], None],
        *,
        warn_unsupported: bool,
    ) -> None:
        self._key = key
        self._warn_unsupported = warn_unsupported
        self._setting = setting
        self._model_name = model_name
        self._model_path = model_path
        self._open_encoder = open_encoder
        self._check_dimension = check_dimension
        self._encoder: Any = None  # the ONNX encoder; False when torch serves
        self._lock = threading.Lock()

    @property
    def _off(self) -> bool:
        return self._setting == "torch"

    @property
    def runtime(self) -> Literal["onnx", "torch"] | None:
        if self._off:
            return "torch"
        if self._setting == "onnx":
            return "onnx"
        if self._encoder is None:
            return None
        return "onnx" if self._encoder else "torch"

    def encoder(self) -> Any:
        """The ONNX encoder, or ``None`` when torch serves."""
        if self._off:
            return None
        with self._lock:
            if self._encoder is None:
                self._encoder = self._prepare() or False
            return self._encoder or None

    def _prepare(self) -> Any:
        from haiku.core.embedders import onnx_query

        name = self._model_name
        required = self._setting == "onnx"
        path = self._model_path()
        layout = plain_layout(path)
        if not onnx_query.onnx_runtime_available() or layout is None:
            if required:
                raise EmbeddingError(
                    f"embeddings.{self._key} is onnx, but "
                    + ("onnxruntime is not installed (pip install onnxruntime)" if layout is not None
                       else f"embedding model {name!r} is not a plain transformer-and-pooling model")
                )
            if self._warn_unsupported:
                log.warning("embedder.onnx_unavailable", model=name, key=self._key,
                            reason="onnxruntime is not installed" if layout is not None else "not a plain model")
            return None
        try:
            encoder = self._open_encoder(path, layout)
        except Exception as exc:
            if required:
                raise EmbeddingError(
                    f"embeddings.{self._key} is onnx, but the ONNX encoder of {name!r} "
                    f"could not be prepared: {exc}"
                ) from exc
            log.warning("embedder.onnx_unavailable", model=name, key=self._key,
                        reason=f"{type(exc).__name__}: {exc}")
            return None
        self._check_dimension(encoder.dimension)
        return encoder
