"""Every section's model under one name, kept so that existing imports go on working.

The models live with their owners (docs/configuration.md): ``storage`` (storage,
lancedb), ``embeddings``, ``search`` (search, reranking), ``qa`` (qa, sandbox),
``processing``, ``sources`` and ``ingester`` (with ``engine`` and
``ingester_http``), and ``app`` (the whole tree and the rules across sections).
New code imports from ``haiku.core.config`` or the owner's module.
"""

from haiku.core.config._base import Section, platform_cache_dir, platform_data_dir
from haiku.core.config.app import AppConfig
from haiku.core.config.embeddings import MODEL_CACHE_ENV, EmbeddingModelConfig, EmbeddingsConfig
from haiku.core.config.ingester import IngestedDatabaseConfig, IngesterConfig, QueueConfig, WorkersConfig
from haiku.core.config.processing import PictureModelConfig, ProcessingConfig
from haiku.core.config.qa import QAConfig, QAModelConfig, SandboxConfig
from haiku.core.config.search import RerankingConfig, RerankModelConfig, SearchConfig
from haiku.core.config.sources import (
    DEFAULT_IGNORE_PATTERNS,
    DEFAULT_INCLUDE_PATTERNS,
    SUPPORTED_SOURCE_TYPES,
    FsSourceConfig,
    RetryConfig,
    S3SourceConfig,
    SourceConfig,
)
from haiku.core.config.storage import (
    DEFAULT_DATABASE_NAME,
    DatabaseEntry,
    LanceDBConfig,
    StorageConfig,
    is_uri,
)

__all__ = [
    "DEFAULT_DATABASE_NAME",
    "DEFAULT_IGNORE_PATTERNS",
    "DEFAULT_INCLUDE_PATTERNS",
    "MODEL_CACHE_ENV",
    "SUPPORTED_SOURCE_TYPES",
    "AppConfig",
    "DatabaseEntry",
    "EmbeddingModelConfig",
    "EmbeddingsConfig",
    "FsSourceConfig",
    "IngestedDatabaseConfig",
    "IngesterConfig",
    "LanceDBConfig",
    "PictureModelConfig",
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
    "Section",
    "SourceConfig",
    "StorageConfig",
    "WorkersConfig",
    "is_uri",
    "platform_cache_dir",
    "platform_data_dir",
]
