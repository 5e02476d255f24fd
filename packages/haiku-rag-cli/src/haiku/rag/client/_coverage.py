"""Which databases a client covers, decided without opening any (docs/cli.md, docs/client.md)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from haiku.core.config import AppConfig
from haiku.core.errors import AmbiguousDatabaseError, UnknownDatabaseError, names_list
from haiku.core.scope import DatabaseRef, DatabaseScope


def check_constructor(db_path: str | Path | None, sources: Sequence[str] | None, create: bool, tag: str | None) -> None:
    """What is wrong with the arguments alone, raised at construction."""
    if db_path is not None and sources is not None:
        raise AmbiguousDatabaseError(
            f"db_path={db_path!s} and sources={list(sources)!r} both say which databases the client "
            "covers; pass one of them"
        )
    if tag is not None and create:
        raise ValueError(
            f"tag={tag!r} reads an existing database as it was at the tag, and create=True creates one; "
            "pass one of them"
        )
    refuse_one_string(sources)


def refuse_one_string(sources: Sequence[str] | None) -> None:
    if isinstance(sources, str):
        raise TypeError("sources takes a list of database names, not a single string")


def resolve_coverage(
    config: AppConfig, db_path: str | Path | None, sources: Sequence[str] | None
) -> DatabaseScope:
    """The configured scope narrowed by ``sources``, or the scope of ``db_path``."""
    if db_path is not None:
        return DatabaseScope.resolve(config, database_path=db_path)
    scope = DatabaseScope.resolve(config)
    if sources is None:
        return scope
    return scope.select(sources)


def apply_tag(scope: DatabaseScope, tag: str | None) -> DatabaseScope:
    """``tag=`` reads the one covered database at the tag."""
    if tag is None:
        return scope
    if scope.covers_multiple:
        raise AmbiguousDatabaseError(
            f"a tag is read on one database, and this client covers {names_list(scope.names)}; "
            "name the one to read with sources=[name]"
        )
    return DatabaseScope((scope.databases[0].at_tag(tag),))


def refuse_create_on_set(scope: DatabaseScope) -> None:
    if scope.covers_multiple:
        raise AmbiguousDatabaseError(
            f"create=True creates one database, and this client covers {names_list(scope.names)}; "
            "name the one to create with sources=[name]"
        )


def check_names(names: Iterable[str], covered: Sequence[str | None]) -> list[str]:
    """``names`` deduplicated in the order given; any the client does not cover raise."""
    wanted = list(dict.fromkeys(names))
    unknown = [name for name in wanted if name not in covered or name is None]
    if unknown:
        raise UnknownDatabaseError.on_client(map(str, unknown), covered)
    return wanted


def selected_names(sources: Sequence[str], covered: Sequence[str | None]) -> list[str]:
    """A selection by name, checked against the covered names; opens nothing."""
    refuse_one_string(sources)
    return check_names(sources, covered)


def ref_named(scope: DatabaseScope, name: str) -> DatabaseRef:
    for ref in scope.databases:
        if ref.name == name:
            return ref
    raise UnknownDatabaseError.on_client([name], scope.names)
