"""``ingester``: the databases it keeps in sync, its queue, workers, engine and endpoint (docs/ingester.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, field_validator, model_validator

from haiku.core.config._base import Section, as_path, is_blank
from haiku.core.config.engine import EngineConfig, LocalEngineConfig
from haiku.core.config.ingester_http import IngesterHttpConfig
from haiku.core.config.sources import RetryConfig, SourceConfig, check_source_type


class IngestedDatabaseConfig(Section):
    # No sources: the database is fed only by `haiku-ingester add` (docs/ingester.md, "Adding documents").
    sources: list[SourceConfig] = Field(default_factory=list)

    @field_validator("sources", mode="before")
    @classmethod
    def _check_types(cls, value: Any) -> Any:
        if isinstance(value, list):
            for index, item in enumerate(value):
                check_source_type(index, item)
        return value


class QueueConfig(Section):
    path: Path | None = None  # None -> <storage.data_dir>/ingester.db
    retention_days: float | None = Field(default=30, ge=0)  # None keeps every finished job

    @field_validator("path", mode="before")
    @classmethod
    def _blank_is_default(cls, value: Any) -> Any:
        return None if is_blank(value) else as_path(value)


class WorkersConfig(Section):
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


class IngesterConfig(Section):
    databases: dict[str, IngestedDatabaseConfig] = Field(default_factory=dict)
    queue: QueueConfig = Field(default_factory=QueueConfig)
    workers: WorkersConfig = Field(default_factory=WorkersConfig)
    engine: EngineConfig = Field(default_factory=LocalEngineConfig)  # see haiku.core.config.engine
    http: IngesterHttpConfig = Field(default_factory=IngesterHttpConfig)  # see haiku.core.config.ingester_http
    # `haiku-ingester add URL` refuses private, loopback and link-local addresses unless this is on.
    allow_private_urls: bool = False

    @field_validator("databases", mode="before")
    @classmethod
    def _name_errors(cls, value: Any) -> Any:
        if value is None:
            return {}
        if isinstance(value, dict):
            for name in value:
                if name is None or not str(name).strip():
                    raise ValueError("ingester.databases has an entry with no name")
            return {name: {} if entry is None else entry for name, entry in value.items()}
        return value
