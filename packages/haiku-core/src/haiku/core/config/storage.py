"""``storage`` and ``lancedb``: where the databases are and how they are kept (docs/configuration.md, docs/storage.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, field_validator, model_validator

from haiku.core.config._base import OptionalText, Section, as_path, is_blank, option_value, platform_data_dir

DEFAULT_DATABASE_NAME = "haiku.rag"


class StorageConfig(Section):
    # Resolved when the configuration is built, so that scope resolution later
    # reads no environment: absent, null or blank -> the platform data dir.
    data_dir: Path = Field(default_factory=platform_data_dir)
    auto_vacuum: bool = True
    vacuum_retention_seconds: int = Field(default=86400, ge=0)
    writer_lock_timeout_s: float = Field(default=60.0, gt=0)

    @field_validator("data_dir", mode="before")
    @classmethod
    def _blank_is_default(cls, value: Any) -> Any:
        return platform_data_dir() if is_blank(value) else as_path(value)


def is_uri(location: str | Path) -> bool:
    """A location with ``://`` is object storage and stays a string (docs/configuration.md)."""
    return isinstance(location, str) and "://" in location


class DatabaseEntry(Section):
    """One `lancedb.databases` entry in its long form: a location, read live or at a tag."""

    location: str
    tag: str | None = None

    @field_validator("location", mode="before")
    @classmethod
    def _location_given(cls, value: Any) -> Any:
        if isinstance(value, Path):
            value = str(value)
        if is_blank(value):
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


class LanceDBConfig(Section):
    uri: OptionalText = None
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

    @field_validator("storage_options", mode="before")
    @classmethod
    def _options_as_strings(cls, value: Any) -> Any:
        if value is None:
            return {}
        if isinstance(value, dict):
            return {str(k): option_value(v) for k, v in value.items()}
        return value

    @model_validator(mode="after")
    def _uri_or_databases(self) -> LanceDBConfig:
        if self.uri is not None and self.databases:
            raise ValueError(
                "lancedb.uri and lancedb.databases are mutually exclusive; set one of them "
                "(move the uri into lancedb.databases under a name)"
            )
        return self
