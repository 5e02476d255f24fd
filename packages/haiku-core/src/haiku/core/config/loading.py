"""Finding, reading and expanding the YAML configuration (SPEC §1.1)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from haiku.core.config.models import AppConfig, platform_data_dir
from haiku.core.errors import InvalidConfigError, MissingEnvVarError

CONFIG_ENV_VAR = "HAIKU_RAG_CONFIG_PATH"
CONFIG_DIR_VAR = "HAIKU_RAG_CONFIG_DIR"
CONFIG_FILE_NAME = "haiku.rag.yaml"

# $$ | ${NAME} | ${NAME:-default}
_VAR = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def load_dotenv_file(path: Path | None = None) -> None:
    """Load ``./.env`` into the environment without overriding what is set."""
    env_path = path or Path.cwd() / ".env"
    if not env_path.is_file():
        return
    for raw in env_path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        if line.startswith("export "):
            line = line[len("export ") :]
        key, value = line.split("=", 1)
        key, value = key.strip(), value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        if key and key not in os.environ:
            os.environ[key] = value


def expand_vars(value: str, *, config_dir: Path | None, where: str | None = None) -> str:
    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name, default = match.group(1), match.group(2)
        if name == CONFIG_DIR_VAR and config_dir is not None:
            return str(config_dir)
        current = os.environ.get(name)
        if current:
            return current
        if default is not None:
            return default
        raise MissingEnvVarError(name, where)

    return _VAR.sub(replace, value)


def _expand_tree(node: Any, *, config_dir: Path | None, path: str = "") -> Any:
    if isinstance(node, str):
        return expand_vars(node, config_dir=config_dir, where=path or None)
    if isinstance(node, dict):
        return {
            key: _expand_tree(value, config_dir=config_dir, path=f"{path}.{key}" if path else str(key))
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_expand_tree(v, config_dir=config_dir, path=f"{path}[{i}]") for i, v in enumerate(node)]
    return node


def find_config_file(path: str | Path | None = None) -> Path | None:
    """The lookup order: explicit path, env var, ./haiku.rag.yaml, the data dir."""
    if path is not None:
        explicit = Path(path).expanduser()
        if not explicit.is_file():
            raise InvalidConfigError(f"Config file not found: {explicit}")
        return explicit
    from_env = os.environ.get(CONFIG_ENV_VAR)
    if from_env:
        env_path = Path(from_env).expanduser()
        if not env_path.is_file():
            raise InvalidConfigError(f"Config file not found: {env_path} (from {CONFIG_ENV_VAR})")
        return env_path
    for candidate in (Path.cwd() / CONFIG_FILE_NAME, platform_data_dir() / CONFIG_FILE_NAME):
        if candidate.is_file():
            return candidate
    return None


def format_validation_error(error: ValidationError) -> str:
    lines = []
    for item in error.errors():
        loc = ".".join(str(part) for part in item["loc"] if not str(part).startswith("function-"))
        msg = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            msg = f"unknown key '{item['loc'][-1]}'"
            loc = ".".join(str(p) for p in item["loc"][:-1])
        lines.append(f"{loc}: {msg}" if loc else msg)
    return "; ".join(lines)


def config_from_dict(data: dict[str, Any] | None, *, source: Path | None = None) -> AppConfig:
    """Validate an already-parsed mapping (expanding ``${VAR}``)."""
    config_dir = source.resolve().parent if source is not None else None
    expanded = _expand_tree(data or {}, config_dir=config_dir)
    try:
        config = AppConfig.model_validate(expanded)
    except ValidationError as exc:
        where = f" in {source}" if source is not None else ""
        raise InvalidConfigError(f"Invalid configuration{where}: {format_validation_error(exc)}") from None
    config.config_path = source
    return config


def load_config(path: str | Path | None = None) -> AppConfig:
    """Load ``.env``, find the config file and return the validated ``AppConfig``."""
    load_dotenv_file()
    found = find_config_file(path)
    if found is None:
        return AppConfig()
    try:
        data = yaml.safe_load(found.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise InvalidConfigError(f"Cannot read config file {found}: {exc}") from None
    if data is not None and not isinstance(data, dict):
        raise InvalidConfigError(f"Config file {found} must hold a mapping at the top level")
    return config_from_dict(data, source=found)
