"""``embeddings``: the model that turns texts (and images) into vectors, and where it runs (docs/configuration.md)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from haiku.core.config._base import Section, platform_cache_dir

MODEL_CACHE_ENV = "HAIKU_MODEL_CACHE_DIR"


class EmbeddingModelConfig(Section):
    # openai-multimodal: an OpenAI-compatible /embeddings endpoint that also embeds
    # images into the space of its texts (vLLM's multimodal embeddings; docs/pictures.md).
    provider: Literal["sentence-transformers", "openai", "openai-multimodal"] = "sentence-transformers"
    name: str = "all-MiniLM-L6-v2"
    vector_dim: int = Field(default=384, gt=0)
    base_url: str | None = None
    api_key: str | None = None
    # openai-multimodal only: text sent beside each image (some models want an instruction).
    image_prompt: str | None = None
    # openai-multimodal only: images embedded at once (one request each).
    image_concurrency: int = Field(default=4, gt=0)


class EmbeddingsConfig(Section):
    model: EmbeddingModelConfig = Field(default_factory=EmbeddingModelConfig)
    batch_size: int = Field(default=64, gt=0)
    # How a search query is embedded by a local model: "auto" runs the model
    # exported to ONNX when onnxruntime is installed and the model has a plain
    # layout (same vectors, no torch import; docs/configuration.md), else torch.
    query_runtime: Literal["auto", "onnx", "torch"] = "auto"
    # How documents are embedded by a local model, with the same choice: the
    # ONNX export keeps torch out of the ingester daemon (~260 MiB less).
    document_runtime: Literal["auto", "onnx", "torch"] = "auto"
    # Where documents are embedded: "auto" takes a GPU when one is usable (CUDA
    # device nodes and a CUDA build of torch, checked without importing torch on
    # a machine that has neither), else the CPU; or "cpu", "cuda", "cuda:N",
    # "mps". A GPU means the torch encoder (docs/configuration.md, "Devices").
    document_device: str = "auto"
    # "auto": fp16 on a GPU, fp32 on the CPU. The vectors' identity is the same
    # whatever the device and precision.
    document_precision: Literal["auto", "fp32", "fp16", "bf16"] = "auto"
    # Where exported models are kept; None: $HAIKU_MODEL_CACHE_DIR, else the
    # per-user cache directory (~/.cache/haiku.rag/models on Linux).
    model_cache_dir: Path | None = None

    @field_validator("document_device", mode="before")
    @classmethod
    def _known_device(cls, value: Any) -> Any:
        from haiku.core.embedders.device import valid_device

        if isinstance(value, str) and valid_device(value.strip().lower()):
            return value.strip().lower()
        raise ValueError(f"{value!r} is not a device: use auto, cpu, cuda, cuda:N or mps")

    @model_validator(mode="after")
    def _onnx_runs_on_the_cpu_in_fp32(self) -> EmbeddingsConfig:
        if self.document_runtime == "onnx" and self.document_device not in ("auto", "cpu"):
            raise ValueError(
                f"embeddings.document_runtime is onnx, which runs on the CPU, but embeddings.document_device "
                f"is {self.document_device}: set document_runtime to auto or torch to embed on the GPU"
            )
        if self.document_runtime == "onnx" and self.document_precision not in ("auto", "fp32"):
            raise ValueError(
                f"embeddings.document_runtime is onnx, which runs in fp32, but embeddings.document_precision "
                f"is {self.document_precision}: set document_runtime to auto or torch"
            )
        return self

    def resolved_model_cache_dir(self) -> Path:
        if self.model_cache_dir is not None:
            return self.model_cache_dir.expanduser()
        from_env = os.environ.get(MODEL_CACHE_ENV, "").strip()
        return Path(from_env).expanduser() if from_env else platform_cache_dir() / "models"
