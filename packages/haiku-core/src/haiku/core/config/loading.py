"""Finding, reading and expanding the YAML configuration (docs/configuration.md)."""

from __future__ import annotations

import os
import re
import types
import typing
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from haiku.core.config._base import platform_data_dir
from haiku.core.config.app import AppConfig
from haiku.core.config.sources import SUPPORTED_SOURCE_TYPES
from haiku.core.errors import InvalidConfigError, MissingEnvVarError

CONFIG_ENV_VAR = "HAIKU_RAG_CONFIG_PATH"
CONFIG_DIR_VAR = "HAIKU_RAG_CONFIG_DIR"
CONFIG_FILE_NAME = "haiku.rag.yaml"

# $$ | ${NAME} | ${NAME:-default}
_VAR = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_DOTENV_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.]*)\s*=\s*(.*?)\s*$")


def _dotenv_value(raw: str) -> str:
    if raw[:1] in ("'", '"'):
        quote = raw[0]
        end = raw.find(quote, 1)
        if end != -1:
            value = raw[1:end]
            if quote == '"':
                value = value.replace("\\n", "\n").replace('\\"', '"')
            return value
    # Unquoted: a `#` after whitespace starts a comment.
    return re.split(r"\s+#", raw, maxsplit=1)[0].strip()


def load_dotenv_file(path: Path | None = None) -> None:
    """Load ``./.env`` into the environment, never overriding a variable already set."""
    env_path = path or Path.cwd() / ".env"
    if not env_path.is_file():
        return
    for line in env_path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _DOTENV_LINE.match(line)
        if match is None:
            continue
        key, value = match.group(1), _dotenv_value(match.group(2))
        if key not in os.environ:
            os.environ[key] = value


def expand_vars(value: str, *, config_dir: Path | None, where: str | None = None) -> str:
    """Expand ``${VAR}``, ``${VAR:-default}`` and ``$$`` in one string.

    An empty variable counts as unset (as in the shell's ``:-``).
    ``${HAIKU_RAG_CONFIG_DIR}`` is the directory holding the config file.
    """

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


def _key_text(key: Any) -> Any:
    # YAML reads `2024:` or `true:` as non-strings; every key here is a name.
    return str(key) if isinstance(key, bool | int | float) else key


def _child_path(path: str, key: Any) -> str:
    if path.endswith("databases"):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def _expand_tree(node: Any, *, config_dir: Path | None, path: str = "", file: Path | None = None) -> Any:
    if isinstance(node, str):
        where = path or None
        if file is not None:
            where = f"{path} of {file}" if path else str(file)
        return expand_vars(node, config_dir=config_dir, where=where)
    if isinstance(node, dict):
        return {
            _key_text(key): _expand_tree(
                value, config_dir=config_dir, path=_child_path(path, key), file=file
            )
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [
            _expand_tree(v, config_dir=config_dir, path=f"{path}[{i}]", file=file)
            for i, v in enumerate(node)
        ]
    return node


def config_lookup(given: str = "the path passed") -> list[str]:
    """Where ``find_config_file`` looks when no path is given, in order, as a user reads it.

    ``given`` names how the caller passes a path (a command line says its flag).
    """
    from_env = os.environ.get(CONFIG_ENV_VAR)
    return [
        f"{given} (not given)",
        f"${CONFIG_ENV_VAR} ({from_env or 'unset'})",
        str(Path.cwd() / CONFIG_FILE_NAME),
        str(platform_data_dir() / CONFIG_FILE_NAME),
    ]


def find_config_file(path: str | Path | None = None) -> Path | None:
    """The lookup order: explicit path, ``$HAIKU_RAG_CONFIG_PATH``, ./haiku.rag.yaml, the data dir."""
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


def _render_loc(parts: tuple[Any, ...]) -> str:
    """``('ingester', 'databases', 'a', 'sources', 0)`` -> ``ingester.databases[a].sources[0]``."""
    out = ""
    previous: Any = None
    for part in parts:
        if isinstance(part, int) or previous == "databases":
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
        previous = part
    return out


def _model_class(annotation: Any) -> type[BaseModel] | None:
    """The section model behind a field annotation (through Optional, list, dict)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType, list, dict):
        for arg in typing.get_args(annotation):
            found = _model_class(arg)
            if found is not None:
                return found
    return None


def _valid_keys(parts: tuple[Any, ...]) -> list[str]:
    """The keys the section at ``parts`` accepts, walking the model tree."""
    model: type[BaseModel] | None = AppConfig
    for part in parts:
        if model is None:
            return []
        if isinstance(part, str) and part in model.model_fields:
            model = _model_class(model.model_fields[part].annotation)
        # list indexes and dict keys (database names) stay on the same model
    return [] if model is None else list(model.model_fields)


def _without_source_tag(parts: tuple[Any, ...]) -> tuple[Any, ...]:
    """``(…, 'sources', 0, 's3', 'location')`` -> ``(…, 'sources', 0, 'location')``: the kind is no key."""
    for i in range(2, len(parts)):
        if parts[i - 2] == "sources" and isinstance(parts[i - 1], int) and parts[i] in SUPPORTED_SOURCE_TYPES:
            return parts[:i] + parts[i + 1 :]
    return parts


def format_validation_error(error: ValidationError) -> str:
    """One line per failure, each naming the key or entry at fault."""
    lines = []
    for item in error.errors():
        parts = _without_source_tag(tuple(p for p in item["loc"] if not str(p).startswith("function-")))
        msg = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            parts, key = parts[:-1], parts[-1]
            msg = f"unknown key '{key}'"
            valid = _valid_keys(parts)
            if valid:
                msg += f" (valid keys: {', '.join(valid)})"
        elif item["type"] not in ("value_error", "assertion_error", "missing") and isinstance(
            item.get("input"), str | int | float | bool
        ):
            msg += f" (got {item['input']!r})"
        loc = _render_loc(parts)
        lines.append(f"{loc}: {msg}" if loc and not msg.startswith(loc) else msg)
    return "; ".join(lines)


def config_from_dict(data: dict[str, Any] | None, *, source: Path | None = None) -> AppConfig:
    """Validate an already-parsed mapping, expanding ``${VAR}`` in every string value.

    ``source`` is the file it came from: it anchors ``${HAIKU_RAG_CONFIG_DIR}``
    and is named in error messages.
    """
    config_dir = source.resolve().parent if source is not None else None
    expanded = _expand_tree(data or {}, config_dir=config_dir, file=source)
    try:
        config = AppConfig.model_validate(expanded)
    except ValidationError as exc:
        where = f" in {source}" if source is not None else ""
        raise InvalidConfigError(f"Invalid configuration{where}: {format_validation_error(exc)}") from None
    config.config_path = source
    return config


FLOW_HINT = (
    "\nA ${…} inside a YAML flow mapping or list ({…} or […] on one line) must be quoted, "
    'e.g. {location: "${HAIKU_RAG_CONFIG_DIR}/papers.lancedb", tag: r1} (docs/configuration.md)'
)


def _flow_hint(error: BaseException) -> str:
    """The usual cause of a flow-collection parse error that stops at ``${``: the ``{`` reads as YAML."""
    if not isinstance(error, yaml.MarkedYAMLError) or error.problem_mark is None:
        return ""
    mark = error.problem_mark
    if "flow" not in (error.context or "") or mark.buffer is None:
        return ""
    return FLOW_HINT if mark.buffer[max(0, mark.pointer - 1) : mark.pointer + 1] == "${" else ""


def load_config(path: str | Path | None = None) -> AppConfig:
    """Load ``./.env``, find the config file (docs/configuration.md) and return the validated ``AppConfig``.

    Nothing found means every default.
    """
    load_dotenv_file()
    found = find_config_file(path)
    if found is None:
        return AppConfig()
    try:
        data = yaml.safe_load(found.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise InvalidConfigError(f"Cannot read config file {found}: {exc}{_flow_hint(exc)}") from None
    if data is not None and not isinstance(data, dict):
        raise InvalidConfigError(f"Config file {found} must hold a mapping at the top level")
    return config_from_dict(data, source=found)
