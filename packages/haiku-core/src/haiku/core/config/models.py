"""The configuration tree (docs/configuration.md): one pydantic model per section.

Every model forbids unknown keys so a typo fails at load, naming the key.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PrivateAttr,
    Tag,
    field_validator,
    model_validator,
)

from haiku.core.config.engine import EngineConfig, LocalEngineConfig
from haiku.core.config.ingester_http import IngesterHttpConfig
from haiku.core.convert.formats import include_patterns

DEFAULT_DATABASE_NAME = "haiku.rag"
SUPPORTED_SOURCE_TYPES = ("fs", "s3")
# The formats the ingester converts (docs/ingester.md, "Formats"): patterns are relative to a
# source's root; `*` also matches across folders, `**/` spells it out.
DEFAULT_INCLUDE_PATTERNS = include_patterns()
# Hidden files and folders, Office lock files, editor and temporary files.
DEFAULT_IGNORE_PATTERNS = [
    ".*",
    ".*/**",
    "**/.*",
    "**/.*/**",
    "~$*",
    "**/~$*",
    "*.tmp",
    "**/*.tmp",
    "*.swp",
    "**/*.swp",
]


def platform_data_dir() -> Path:
    """The per-user data directory (docs/configuration.md): never the working directory."""
    return _per_user_dir(cache=False)


def platform_cache_dir() -> Path:
    """The per-user cache directory: what can be made again (exported models)."""
    return _per_user_dir(cache=True)


def _per_user_dir(*, cache: bool) -> Path:
    home = Path.home()
    if sys.platform == "darwin":
        return home / "Library" / ("Caches" if cache else "Application Support") / "haiku.rag"
    if sys.platform.startswith("win"):
        variable, fallback = ("LOCALAPPDATA", "Local") if cache else ("APPDATA", "Roaming")
        base = os.environ.get(variable)
        folder = (Path(base) if base else home / "AppData" / fallback) / "haiku.rag"
        return folder / "Cache" if cache else folder
    if cache:
        xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
        return (Path(xdg) if xdg else home / ".cache") / "haiku.rag"
    return home / ".local" / "share" / "haiku.rag"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


def _is_blank(value: Any) -> bool:
    """Absent, null or only white space: a key left unset (each validator says what that means)."""
    return value is None or (isinstance(value, str) and not value.strip())


def _as_path(value: Any) -> Any:
    return Path(value).expanduser() if isinstance(value, str | Path) else value


class StorageConfig(_Section):
    # Resolved when the configuration is built, so that scope resolution later
    # reads no environment: absent, null or blank -> the platform data dir.
    data_dir: Path = Field(default_factory=platform_data_dir)
    auto_vacuum: bool = True
    vacuum_retention_seconds: int = Field(default=86400, ge=0)
    writer_lock_timeout_s: float = Field(default=60.0, gt=0)

    @field_validator("data_dir", mode="before")
    @classmethod
    def _blank_is_default(cls, value: Any) -> Any:
        return platform_data_dir() if _is_blank(value) else _as_path(value)


def is_uri(location: str | Path) -> bool:
    """A location with ``://`` is object storage and stays a string (docs/configuration.md)."""
    return isinstance(location, str) and "://" in location


def _option_value(value: Any) -> Any:
    # storage_options are strings for LanceDB; YAML turns `allow_http: true`
    # into a bool, which would otherwise be refused.
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return value


class DatabaseEntry(_Section):
    """One `lancedb.databases` entry in its long form: a location, read live or at a tag."""

    location: str
    tag: str | None = None

    @field_validator("location", mode="before")
    @classmethod
    def _location_given(cls, value: Any) -> Any:
        if isinstance(value, Path):
            value = str(value)
        if _is_blank(value):
            raise ValueError("an entry needs a location")
        return value

    @field_validator("tag")
    @classmethod
    def _tag_not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("a tag cannot be blank")
        return value


def _normalise_entry(name: str, entry: Any) -> Any:
    """One entry in long form, or a ValueError naming ``lancedb.databases[NAME]``."""
    if isinstance(entry, DatabaseEntry):
        return entry
    if entry is None or isinstance(entry, str | Path):
        location = "" if entry is None else str(entry)
        if not location.strip():
            raise ValueError(f"lancedb.databases[{name}] has no location")
        return {"location": location}
    if not isinstance(entry, dict):
        raise ValueError(
            f"lancedb.databases[{name}] must be a location or a mapping with location and tag"
        )
    unknown = [str(key) for key in entry if key not in ("location", "tag")]
    if unknown:
        raise ValueError(
            f"lancedb.databases[{name}] has unknown key(s) {', '.join(unknown)}; "
            "an entry takes location and tag"
        )
    location = entry.get("location")
    if location is None or not str(location).strip():
        raise ValueError(f"lancedb.databases[{name}] has no location")
    tag = entry.get("tag")
    if tag is not None and not str(tag).strip():
        raise ValueError(f"lancedb.databases[{name}] has a blank tag")
    # YAML reads `tag: 2026-06-30` as a date; a tag is its text.
    return {"location": str(location), "tag": None if tag is None else str(tag)}


class LanceDBConfig(_Section):
    uri: str | None = None
    # Insertion order is the configured order every selection follows.
    databases: dict[str, DatabaseEntry] = Field(default_factory=dict)
    storage_options: dict[str, str] = Field(default_factory=dict)
    read_consistency_interval_seconds: float | None = Field(default=30.0, ge=0)
    # The longest an open or a read of a database on object storage may take before it
    # fails naming the database (an endpoint that accepts and never answers); null: no bound.
    object_storage_timeout_s: float | None = Field(default=30.0, gt=0)
    # LanceDB's caches for one process, shared by all its databases (docs/storage.md, "Memory").
    index_cache_mb: int = Field(default=256, ge=1)
    metadata_cache_mb: int = Field(default=64, ge=1)

    @field_validator("databases", mode="before")
    @classmethod
    def _normalise_entries(cls, value: Any) -> Any:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise ValueError("lancedb.databases must map names to locations")
        out: dict[str, Any] = {}
        for raw_name, entry in value.items():
            name = "" if raw_name is None else str(raw_name)
            if not name.strip():
                raise ValueError("lancedb.databases has an entry with no name")
            out[name] = _normalise_entry(name, entry)
        return out

    @field_validator("uri", mode="before")
    @classmethod
    def _blank_uri_is_none(cls, value: Any) -> Any:
        return None if _is_blank(value) else value

    @field_validator("storage_options", mode="before")
    @classmethod
    def _options_as_strings(cls, value: Any) -> Any:
        if value is None:
            return {}
        if isinstance(value, dict):
            return {str(k): _option_value(v) for k, v in value.items()}
        return value

    @model_validator(mode="after")
    def _uri_or_databases(self) -> LanceDBConfig:
        if self.uri is not None and self.databases:
            raise ValueError(
                "lancedb.uri and lancedb.databases are mutually exclusive; set one of them "
                "(move the uri into lancedb.databases under a name)"
            )
        return self


MODEL_CACHE_ENV = "HAIKU_MODEL_CACHE_DIR"


class EmbeddingModelConfig(_Section):
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


class EmbeddingsConfig(_Section):
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


class RerankModelConfig(_Section):
    provider: Literal["cross-encoder", "http"]
    name: str
    base_url: str | None = None
    api_key: str | None = None


class RerankingConfig(_Section):
    model: RerankModelConfig | None = None


class SearchConfig(_Section):
    limit: int = Field(default=5, gt=0)
    # The most results one search or listing returns (CLI, client and MCP alike): a
    # larger limit fails with LimitTooLargeError instead of reading every chunk.
    max_limit: int = Field(default=1000, gt=0, le=1_000_000)
    rerank_pool_factor: int = Field(default=10, gt=0)
    max_context_chars: int = Field(default=5000, ge=0)
    vector_index_metric: Literal["cosine", "l2"] = "cosine"
    vector_nprobes: int = Field(default=40, gt=0)
    vector_refine_factor: int = Field(default=50, gt=0)
    # How hybrid (and full-text) candidates from several databases are fused
    # when no reranker is configured. "rrf" keeps the full-text signal across
    # databases (docs/fusion.md); "cosine" is the original rule.
    fusion: Literal["rrf", "cosine"] = "rrf"
    # Full-text scores over several databases: "global" weighs each query word
    # by its IDF over all the databases searched together, as one database
    # holding everything would (docs/fusion.md); "local" keeps each database's own.
    fts_idf: Literal["global", "local"] = "global"
    # The longest query a search takes (a clear error past it): bounds the work one query may cost.
    max_query_chars: int = Field(default=8192, gt=0)
    # A selected database that cannot be opened or read: "fail" the search naming it (the
    # original rule), or "skip" it, answer from the others and say which were skipped and why.
    on_unavailable: Literal["fail", "skip"] = "fail"
    # Megabytes of small databases' vectors a long-lived process keeps in memory for exact
    # vector search by matrix product (docs/storage.md#vectors-in-memory); 0 turns it off.
    memory_vectors_mb: int = Field(default=512, ge=0)

    @model_validator(mode="after")
    def _limit_within_max_limit(self) -> SearchConfig:
        if self.limit > self.max_limit:
            raise ValueError(f"limit ({self.limit}) must be at most max_limit ({self.max_limit})")
        return self


class QAModelConfig(_Section):
    provider: Literal["openai"] = "openai"
    name: str = "qwen3"
    base_url: str = "http://localhost:11434/v1"
    api_key: str | None = None
    # The model reads images: the pictures of what it retrieved are sent to it (docs/pictures.md).
    images: bool = False


class QAConfig(_Section):
    model: QAModelConfig = Field(default_factory=QAModelConfig)
    request_limit: int = Field(default=30, gt=0)
    # Pictures (or, for a text-only model, their captions) shown per answer (docs/pictures.md).
    max_images: int = Field(default=8, ge=0)


class SandboxConfig(_Section):
    timeout_s: float = Field(default=30.0, gt=0)
    max_output_chars: int = Field(default=20000, gt=0)


class PictureModelConfig(_Section):
    """The OpenAI-compatible vision model that describes pictures at ingest (docs/pictures.md)."""

    base_url: str
    name: str
    api_key_env: str | None = None  # the environment variable holding the key, sent as a Bearer token
    timeout_s: float = Field(default=60.0, gt=0)
    concurrency: int = Field(default=4, ge=1)


class ProcessingConfig(_Section):
    chunk_size: int = Field(default=256, gt=0)
    conversion_timeout_s: float = Field(default=300.0, gt=0)
    # OCR of scanned pages and images (docs/ingester.md, "Scanned pages (OCR)"): auto = the
    # PDF pages without a text layer, and images; force = every page; off = none.
    ocr: Literal["auto", "off", "force"] = "auto"
    # The bundled models read Chinese and English; no other language is bundled.
    ocr_lang: Literal["ch_en"] = "ch_en"
    # The PDF layout step (docs/ingester.md, "PDF layout"): auto = headings, tables, pictures and
    # page headers/footers from the bundled layout model; off = the text layer's lines only.
    pdf_layout: Literal["auto", "off"] = "auto"
    # What a document keeps beside its text (docs/ingester.md, "Structure, pictures and page images"):
    # page images of paginated documents (one row per page) at this many pixels per page point,
    # pictures as PNG (`none`: not stored; `description`: stored and described by picture_model,
    # docs/pictures.md), skipping those whose short side is below min_picture_px and storing at
    # most max_pictures per document.
    page_images: bool = True
    page_image_scale: float = Field(default=1.0, gt=0, le=4)
    pictures: Literal["none", "image", "description"] = "image"
    min_picture_px: int = Field(default=64, ge=0)
    max_pictures: int = Field(default=500, ge=0)
    # The vision model `pictures: description` sends each stored picture to (docs/pictures.md).
    picture_model: PictureModelConfig | None = None

    @model_validator(mode="after")
    def _description_needs_a_model(self) -> ProcessingConfig:
        if self.pictures == "description" and self.picture_model is None:
            raise ValueError(
                "pictures is description but picture_model is not set; name the vision model "
                "(picture_model.base_url, picture_model.name) or choose pictures: image"
            )
        return self


class RetryConfig(_Section):
    max_attempts: int = Field(default=5, ge=1)
    base_delay_s: float = Field(default=2.0, ge=0)
    max_delay_s: float = Field(default=300.0, ge=0)
    jitter: float = Field(default=0.25, ge=0, le=1)

    @model_validator(mode="after")
    def _max_not_below_base(self) -> RetryConfig:
        if self.max_delay_s < self.base_delay_s:
            raise ValueError(
                f"max_delay_s ({self.max_delay_s:g}) must be at least base_delay_s ({self.base_delay_s:g})"
            )
        return self


class FsSourceConfig(_Section):
    type: Literal["fs"] = "fs"
    root: Path
    id: str | None = None
    include_patterns: list[str] = Field(default_factory=lambda: list(DEFAULT_INCLUDE_PATTERNS))
    ignore_patterns: list[str] = Field(default_factory=lambda: list(DEFAULT_IGNORE_PATTERNS))
    watch: bool = True
    poll_interval_s: float = Field(default=300.0, gt=0)
    delete_orphans: bool = True
    # A root that lists no file while documents came from it fails the sweep (an
    # unmounted share must not delete everything) unless the folder may be empty.
    allow_empty: bool = False
    max_file_size: int = Field(default=100 * 1024 * 1024, gt=0)
    # A symlinked file whose target resolves outside `root` is skipped unless this is on
    # (a daemon with more rights than the folder's writers must not read any file for them).
    follow_external_symlinks: bool = False
    retry: RetryConfig | None = None

    @field_validator("id", mode="before")
    @classmethod
    def _blank_id_is_default(cls, value: Any) -> Any:
        return None if _is_blank(value) else value

    @field_validator("root", mode="before")
    @classmethod
    def _root_given(cls, value: Any) -> Any:
        if _is_blank(value):
            raise ValueError("an fs source needs a root folder")
        return _as_path(value)

    @property
    def source_id(self) -> str:
        """The configured id, else ``fs:<absolute resolved root>``."""
        if self.id:
            return self.id
        return f"fs:{Path(self.root).expanduser().resolve()}"


class S3SourceConfig(_Section):
    """Objects under an ``s3://bucket/prefix`` (docs/configuration.md): swept, never watched."""

    type: Literal["s3"]
    location: str
    id: str | None = None
    # As lancedb.storage_options: aws_endpoint, aws_region, allow_http; credentials
    # are best left to the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY).
    storage_options: dict[str, str] = Field(default_factory=dict)
    include_patterns: list[str] = Field(default_factory=lambda: list(DEFAULT_INCLUDE_PATTERNS))
    ignore_patterns: list[str] = Field(default_factory=lambda: list(DEFAULT_IGNORE_PATTERNS))
    watch: Literal[False] = False  # object storage sends no events: sweeps every poll_interval_s
    poll_interval_s: float = Field(default=300.0, gt=0)
    delete_orphans: bool = True
    allow_empty: bool = False
    max_file_size: int = Field(default=100 * 1024 * 1024, gt=0)
    retry: RetryConfig | None = None

    @field_validator("id", mode="before")
    @classmethod
    def _blank_id_is_default(cls, value: Any) -> Any:
        return None if _is_blank(value) else value

    @field_validator("location")
    @classmethod
    def _s3_location(cls, value: str) -> str:
        if not value.startswith("s3://") or not value[len("s3://") :].split("/", 1)[0]:
            raise ValueError(f"an s3 source's location is s3://BUCKET[/PREFIX], not {value!r}")
        return value

    @field_validator("storage_options", mode="before")
    @classmethod
    def _options_as_strings(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {str(k): _option_value(v) for k, v in value.items()}
        return value

    @property
    def source_id(self) -> str:
        """The configured id, else the location without a trailing ``/``."""
        return self.id or self.location.rstrip("/")


def _check_source_type(index: int, value: Any) -> None:
    # `type` may be left out for fs; anything else is refused
    # here, before pydantic, so the message can list what is supported.
    if not isinstance(value, dict):
        return
    kind = value.get("type", "fs")
    if kind not in SUPPORTED_SOURCE_TYPES:
        raise ValueError(
            f"source {index} has type {kind!r}, which is not supported; supported types: "
            + ", ".join(SUPPORTED_SOURCE_TYPES)
        )


def _source_type(value: Any) -> str:
    return value.get("type", "fs") if isinstance(value, dict) else getattr(value, "type", "fs")


# The source kinds, told apart by `type` (fs when it is left out).
SourceConfig = Annotated[
    Annotated[FsSourceConfig, Tag("fs")] | Annotated[S3SourceConfig, Tag("s3")], Discriminator(_source_type)
]


class IngestedDatabaseConfig(_Section):
    sources: list[SourceConfig]

    @field_validator("sources", mode="before")
    @classmethod
    def _check_types(cls, value: Any) -> Any:
        if isinstance(value, list):
            for index, item in enumerate(value):
                _check_source_type(index, item)
        return value

    @field_validator("sources")
    @classmethod
    def _non_empty(cls, value: list[SourceConfig]) -> list[SourceConfig]:
        if not value:
            raise ValueError("sources must list at least one source")
        return value


class QueueConfig(_Section):
    path: Path | None = None  # None -> <storage.data_dir>/ingester.db
    retention_days: float | None = Field(default=30, ge=0)  # None keeps every finished job

    @field_validator("path", mode="before")
    @classmethod
    def _blank_is_default(cls, value: Any) -> Any:
        return None if _is_blank(value) else _as_path(value)


class WorkersConfig(_Section):
    worker_count: int = Field(default=2, ge=1)
    lease_ttl_s: float = Field(default=120.0, gt=0)
    heartbeat_interval_s: float = Field(default=30.0, gt=0)
    reaper_interval_s: float = Field(default=60.0, gt=0)
    shutdown_grace_s: float = Field(default=60.0, ge=0)
    retry: RetryConfig = Field(default_factory=RetryConfig)

    @model_validator(mode="after")
    def _heartbeat_within_lease(self) -> WorkersConfig:
        # A lease must survive two missed heartbeats before the reaper takes it.
        if self.heartbeat_interval_s > self.lease_ttl_s / 3:
            raise ValueError(
                f"heartbeat_interval_s ({self.heartbeat_interval_s:g}) must be at most "
                f"lease_ttl_s / 3 ({self.lease_ttl_s / 3:g})"
            )
        return self


class IngesterConfig(_Section):
    databases: dict[str, IngestedDatabaseConfig] = Field(default_factory=dict)
    queue: QueueConfig = Field(default_factory=QueueConfig)
    workers: WorkersConfig = Field(default_factory=WorkersConfig)
    engine: EngineConfig = Field(default_factory=LocalEngineConfig)  # see haiku.core.config.engine
    http: IngesterHttpConfig = Field(default_factory=IngesterHttpConfig)  # see haiku.core.config.ingester_http

    @field_validator("databases", mode="before")
    @classmethod
    def _name_errors(cls, value: Any) -> Any:
        if value is None:
            return {}
        if isinstance(value, dict):
            for name, entry in value.items():
                if name is None or not str(name).strip():
                    raise ValueError("ingester.databases has an entry with no name")
                if entry is None:
                    raise ValueError(f"ingester.databases[{name}] needs a sources list")
        return value


class AppConfig(_Section):
    storage: StorageConfig = Field(default_factory=StorageConfig)
    lancedb: LanceDBConfig = Field(default_factory=LanceDBConfig)
    embeddings: EmbeddingsConfig = Field(default_factory=EmbeddingsConfig)
    reranking: RerankingConfig = Field(default_factory=RerankingConfig)
    search: SearchConfig = Field(default_factory=SearchConfig)
    qa: QAConfig = Field(default_factory=QAConfig)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    processing: ProcessingConfig = Field(default_factory=ProcessingConfig)
    ingester: IngesterConfig = Field(default_factory=IngesterConfig)
    # Where the file came from, when it came from one; not a config key.
    _config_path: Path | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _ingested_databases_exist(self) -> AppConfig:
        configured = self.lancedb.databases
        for name in self.ingester.databases:
            if self.lancedb.uri is not None:
                raise ValueError(
                    f"ingester.databases[{name}] cannot be used with lancedb.uri; "
                    "move the location into lancedb.databases under a name"
                )
            if configured:
                if name not in configured:
                    raise ValueError(
                        f"ingester.databases[{name}] names no database in lancedb.databases, "
                        f"which names {', '.join(configured)}"
                    )
                tag = configured[name].tag
                if tag is not None:
                    raise ValueError(
                        f"ingester.databases[{name}] names a database configured at tag '{tag}', "
                        "and the ingester writes the live database"
                    )
            elif name != DEFAULT_DATABASE_NAME:
                raise ValueError(
                    f"ingester.databases[{name}] names no configured database; with no "
                    f"lancedb.databases the only one is {DEFAULT_DATABASE_NAME}"
                )
        return self

    @property
    def config_path(self) -> Path | None:
        """The file this configuration was loaded from, if any."""
        return self._config_path

    @config_path.setter
    def config_path(self, value: Path | None) -> None:
        self._config_path = Path(value) if value is not None else None

    @property
    def data_dir(self) -> Path:
        return self.storage.data_dir

    @property
    def model_cache_dir(self) -> Path:
        """Where exported models are kept (see ``EmbeddingsConfig.model_cache_dir``)."""
        return self.embeddings.resolved_model_cache_dir()

    @property
    def queue_path(self) -> Path:
        return self.ingester.queue.path if self.ingester.queue.path else self.data_dir / "ingester.db"
