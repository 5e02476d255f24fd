"""``ConfigError``: the configuration, or what is installed, cannot do what was asked."""

from __future__ import annotations

from haiku.core._errors.base import ConfigError


class ConfigMismatchError(ConfigError):
    """Embedder identities conflict (database vs config, or across a selection; docs/configuration.md)."""


class MissingEnvVarError(ConfigError, ValueError):
    """An unset or empty ``${VAR}`` without a default in the configuration."""

    def __init__(self, var: str, where: str | None = None) -> None:
        location = f" (in {where})" if where else ""
        super().__init__(
            f"environment variable {var} is unset or empty{location}; "
            f"set it, or give a default with ${{{var}:-default}}"
        )
        self.var = var
        self.where = where


class InvalidConfigError(ConfigError, ValueError):
    """The configuration file is missing, unreadable or fails validation."""


class ConverterUnavailableError(ConfigError):
    """Conversion asked of an install without the ``convert`` extra (docling)."""

    def __init__(self, missing: str = "docling") -> None:
        super().__init__(
            f"converting files needs the convert extra ({missing} is not installed): "
            "pip install 'haiku-core[convert]'"
        )
