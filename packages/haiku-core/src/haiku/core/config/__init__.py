"""Configuration: the models of every section and how a file is found and loaded (docs/configuration.md).

Each section lives with its owner: ``storage`` (storage, lancedb), ``embeddings``,
``search`` (search, reranking), ``qa`` (qa, sandbox), ``processing``, ``sources``
and ``ingester`` (with ``engine`` and ``ingester_http``); ``app`` joins them and
holds the rules across sections. ``config_from_dict`` is the one way a mapping is
validated (``load_config`` reads a file into it): it expands ``${VAR}`` and turns
every failure into one ``InvalidConfigError`` naming each key at fault.
"""

from haiku.core.config.loading import (
    CONFIG_ENV_VAR,
    config_from_dict,
    config_lookup,
    find_config_file,
    load_config,
)
from haiku.core.config.models import (  # one name for every section's model
    DEFAULT_DATABASE_NAME,
    AppConfig,
    DatabaseEntry,
    EmbeddingModelConfig,
    EmbeddingsConfig,
    FsSourceConfig,
    IngestedDatabaseConfig,
    IngesterConfig,
    LanceDBConfig,
    ProcessingConfig,
    QAConfig,
    QAModelConfig,
    QueueConfig,
    RerankingConfig,
    RerankModelConfig,
    RetryConfig,
    S3SourceConfig,
    SandboxConfig,
    SearchConfig,
    SourceConfig,
    StorageConfig,
    WorkersConfig,
    is_uri,
    platform_data_dir,
)

__all__ = [
    "CONFIG_ENV_VAR",
    "DEFAULT_DATABASE_NAME",
    "AppConfig",
    "DatabaseEntry",
    "EmbeddingModelConfig",
    "EmbeddingsConfig",
    "FsSourceConfig",
    "IngestedDatabaseConfig",
    "IngesterConfig",
    "LanceDBConfig",
    "ProcessingConfig",
    "QAConfig",
    "QAModelConfig",
    "QueueConfig",
    "RerankModelConfig",
    "RerankingConfig",
    "RetryConfig",
    "S3SourceConfig",
    "SandboxConfig",
    "SearchConfig",
    "SourceConfig",
    "StorageConfig",
    "WorkersConfig",
    "config_from_dict",
    "config_lookup",
    "find_config_file",
    "is_uri",
    "load_config",
    "platform_data_dir",
]
