"""What every section shares: unknown keys refused, blank values read as unset, the per-user folders."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict


def platform_data_dir() -> Path:
    """The per-user data directory (docs/configuration.md): never the working directory."""
    return _per_user_dir(cache=False)


def platform_cache_dir() -> Path:
    """The per-user cache directory: what can be made again (exported models)."""
    return _per_user_dir(cache=True)


def _per_user_dir(*, cache: bool) -> Path:
    home = Path.home()
    if sys.platform == "darwin":
        return home / "Library" / ("Caches" if cache else "Application Support") / "haiku.rag"
    if sys.platform.startswith("win"):
        variable, fallback = ("LOCALAPPDATA", "Local") if cache else ("APPDATA", "Roaming")
        base = os.environ.get(variable)
        folder = (Path(base) if base else home / "AppData" / fallback) / "haiku.rag"
        return folder / "Cache" if cache else folder
    if cache:
        xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
        return (Path(xdg) if xdg else home / ".cache") / "haiku.rag"
    return home / ".local" / "share" / "haiku.rag"


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


def is_blank(value: Any) -> bool:
    """Absent, null or only white space: a key left unset (each validator says what that means)."""
    return value is None or (isinstance(value, str) and not value.strip())


def as_path(value: Any) -> Any:
    return Path(value).expanduser() if isinstance(value, str | Path) else value




def option_value(value: Any) -> Any:
    # storage_options are strings for LanceDB and object storage; YAML turns
    # `allow_http: true` into a bool, which would otherwise be refused.
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return value


def blank_as_none(value: Any) -> Any:
    return None if is_blank(value) else value


# A text key that absent, null or blank leaves unset.
OptionalText = Annotated[str | None, BeforeValidator(blank_as_none)]
