"""Refusals at start (docs/ingester.md): what must hold before the ingester writes anything."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from haiku.core.config import AppConfig
from haiku.core.errors import AmbiguousDatabaseError, UnknownDatabaseError, database_label, names_list
from haiku.core.scope import DatabaseRef, DatabaseScope
from haiku.ingester.errors import DuplicateSourceError, RootUnavailableError
from haiku.ingester.sources import FolderSource, S3Source, Source

LocationIdentity = tuple


def location_identity(ref: DatabaseRef) -> LocationIdentity:
    """The URI without a trailing ``/``; ``(device, inode)`` of an existing local
    directory; else the resolved path."""
    if not isinstance(ref.location, Path):
        return ("uri", ref.location.rstrip("/"))
    path = ref.location.expanduser()
    try:
        st = os.stat(path)
    except OSError:
        return ("path", str(path.resolve()))
    return ("inode", st.st_dev, st.st_ino)


def ingested_refs(config: AppConfig, names: list[str] | None = None) -> dict[str, DatabaseRef]:
    """The refs of the ingested databases (all, or the names given), in configured order."""
    wanted = list(config.ingester.databases) if names is None else names
    return {name: DatabaseScope.resolve(config, database_name=name).databases[0] for name in wanted}


def select_databases(config: AppConfig, database_name: str | None) -> list[str]:
    ingested = list(config.ingester.databases)
    if database_name is None:
        return ingested
    if database_name not in config.ingester.databases:
        raise UnknownDatabaseError(
            f"unknown {database_label(database_name)}: ingester.databases names {names_list(ingested)}",
            names=[database_name],
        )
    return [database_name]


def check_distinct_locations(refs: Mapping[str, DatabaseRef]) -> None:
    seen: dict[LocationIdentity, str] = {}
    for name, ref in refs.items():
        identity = location_identity(ref)
        other = seen.get(identity)
        if other is not None:
            raise AmbiguousDatabaseError(
                f"ingester.databases names '{other}' and '{name}' at one location, and a database has one writer"
            )
        seen[identity] = name


def check_unique_sources(config: AppConfig) -> None:
    """Source ids must be unique across every configured source, selected or not."""
    owners: dict[str, str] = {}
    for database, entry in config.ingester.databases.items():
        for source in entry.sources:
            sid = source.source_id
            if sid in owners:
                where = (
                    f"both in ingester.databases[{database}]"
                    if owners[sid] == database
                    else f"in ingester.databases[{owners[sid]}] and ingester.databases[{database}]"
                )
                raise DuplicateSourceError(
                    f"source id {sid!r} is configured twice ({where}); give each source its own id"
                )
            owners[sid] = database


def sources_of(config: AppConfig, name: str) -> dict[str, Source]:
    """The configured sources of one ingested database, by source id."""
    default_retry = config.ingester.workers.retry
    return {
        s.source_id: (S3Source if s.type == "s3" else FolderSource)(name, s, default_retry)  # type: ignore[arg-type]
        for s in config.ingester.databases[name].sources
    }


def check_roots(config: AppConfig, names: list[str]) -> None:
    """Every source root of these databases can be listed; else one error naming each that cannot.

    ``run-batch`` checks this before it opens or creates anything, so a wrong
    root leaves no database, queue or folder behind.
    """
    problems = [
        f"{source.label()}: {problem}"
        for name in names
        for source in sources_of(config, name).values()
        if (problem := source.root_problem()) is not None
    ]
    if problems:
        raise RootUnavailableError(
            "; ".join(problems) + "; nothing was ingested or created (fix the root in ingester.databases, "
            "or mount the folder, and run again)"
        )
