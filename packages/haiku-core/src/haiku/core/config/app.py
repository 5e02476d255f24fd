"""The whole configuration: one section per owner, and the rules that span sections (docs/configuration.md)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, PrivateAttr, model_validator

from haiku.core.config._base import Section
from haiku.core.config.embeddings import EmbeddingsConfig
from haiku.core.config.ingester import IngesterConfig
from haiku.core.config.processing import ProcessingConfig
from haiku.core.config.qa import QAConfig, SandboxConfig
from haiku.core.config.search import RerankingConfig, SearchConfig
from haiku.core.config.storage import DEFAULT_DATABASE_NAME, LanceDBConfig, StorageConfig


class AppConfig(Section):
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
