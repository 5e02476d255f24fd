"""A database's sources under ``ingester.databases``: folders and object storage (docs/configuration.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag, field_validator, model_validator

from haiku.core.config._base import OptionalText, Section, as_path, is_blank, option_value
from haiku.core.formats import include_patterns

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


class RetryConfig(Section):
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


class FsSourceConfig(Section):
    type: Literal["fs"] = "fs"
    root: Path
    id: OptionalText = None
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

    @field_validator("root", mode="before")
    @classmethod
    def _root_given(cls, value: Any) -> Any:
        if is_blank(value):
            raise ValueError("an fs source needs a root folder")
        return as_path(value)

    @property
    def source_id(self) -> str:
        """The configured id, else ``fs:<absolute resolved root>``."""
        if self.id:
            return self.id
        return f"fs:{Path(self.root).expanduser().resolve()}"


class S3SourceConfig(Section):
    """Objects under an ``s3://bucket/prefix`` (docs/configuration.md): swept, never watched."""

    type: Literal["s3"]
    location: str
    id: OptionalText = None
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
            return {str(k): option_value(v) for k, v in value.items()}
        return value

    @property
    def source_id(self) -> str:
        """The configured id, else the location without a trailing ``/``."""
        return self.id or self.location.rstrip("/")


def check_source_type(index: int, value: Any) -> None:
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
