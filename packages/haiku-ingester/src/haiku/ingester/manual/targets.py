"""What each argument of ``add`` names: a file, a URL or a text, and its uri (docs/ingester.md)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from haiku.core.config import AppConfig
from haiku.core.errors import database_label
from haiku.ingester.manual.errors import AddRefusedError
from haiku.ingester.manual.source import MAX_FILE_SIZE
from haiku.ingester.manual.spool import GivenFields
from haiku.ingester.manual.urls import check_scheme, is_web_url
from haiku.ingester.sources.files import inspect_file

TEXT_FORMATS = {"md": ".md", "txt": ".txt", "html": ".html"}


@dataclass
class Target:
    """One document to add: its uri, and for a text (or a fetched URL) the bytes to keep."""

    argument: str
    uri: str
    kind: Literal["file", "url", "text"]
    fields: GivenFields
    data: bytes | None = None
    extension: str = ""
    revision: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def slug(title: str) -> str:
    """``Release notes 1.2`` → ``release-notes-1-2``: a text's default identity."""
    text = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    return text[:80] or "untitled"


def text_uri(database: str, key: str) -> str:
    return f"text://{database}/{key}"


def text_target(
    database: str, text: bytes, *, title: str | None, identity: str | None, fmt: str, metadata: dict[str, Any]
) -> Target:
    if not title:
        raise AddRefusedError(
            "a text from standard input needs --title (its identity is a slug of the title)"
        )
    extension = TEXT_FORMATS.get(fmt)
    if extension is None:
        raise AddRefusedError(f"--format {fmt!r} is not one of {', '.join(TEXT_FORMATS)}")
    key = identity.strip() if identity and identity.strip() else slug(title)
    if "/" in key or any(c.isspace() for c in key):
        raise AddRefusedError(f"--identity {key!r} may hold no '/' and no spaces")
    uri = text_uri(database, key)
    return Target("-", uri, "text", GivenFields(uri, title, metadata), data=text, extension=extension)


def file_target(
    config: AppConfig, database: str, argument: str, *, title: str | None, metadata: dict[str, Any]
) -> Target:
    """A file named by path: refused when it lies under a source root of the database (synced already)."""
    path = Path(argument).expanduser().resolve()
    for source in (
        config.ingester.databases[database].sources if database in config.ingester.databases else []
    ):
        if source.type != "fs":
            continue
        root = Path(source.root).expanduser().resolve()
        if path == root or root in path.parents:
            raise AddRefusedError(
                f"{path} lies under the root of source {source.source_id} of {database_label(database)}, "
                "which syncs it already; edit it there, or add a file from outside that folder"
            )
    facts = inspect_file(path, max_file_size=MAX_FILE_SIZE)  # refusals name the file and why
    uri = path.as_uri()
    return Target(argument, uri, "file", GivenFields(uri, title, metadata), revision=facts.revision)


def classify(argument: str) -> Literal["file", "url", "text"]:
    if argument == "-":
        return "text"
    if is_web_url(argument):
        return "url"
    if "://" in argument or argument.lower().startswith("file:"):
        check_scheme(argument)  # file: and other schemes are refused, naming the scheme
    return "file"


def parse_metadata(pairs: list[str]) -> dict[str, str]:
    """``KEY=VALUE`` pairs of ``--meta``."""
    metadata: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise AddRefusedError(f"--meta {pair!r} is not KEY=VALUE")
        metadata[key.strip()] = value
    return metadata
