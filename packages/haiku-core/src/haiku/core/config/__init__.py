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
from haiku.core.config.models import *  # noqa: F403 - every section's model, listed in models.__all__
from haiku.core.config.models import __all__ as _model_names

__all__ = [
    *_model_names,
    "CONFIG_ENV_VAR",
    "config_from_dict",
    "config_lookup",
    "find_config_file",
    "load_config",
]
