"""What `haiku-rag doctor` and `info` report, as typed values (docs/cli.md).

The CLI only prints these; a Python caller gets the same checks and reports.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from haiku.core.errors import ConfigMismatchError, HaikuError
from haiku.core.store.reports import StoreInfo

if TYPE_CHECKING:
    from haiku.core.config import AppConfig
    from haiku.core.embedders import EmbedderIdentity
    from haiku.core.scope import DatabaseRef, DatabaseScope
    from haiku.core.store import Store

Status = Literal["ok", "warn", "fail"]


def reprocess_command(name: str | None = None) -> str:
    """How a `haiku-rag` user re-processes a database: the ingester's command (doctor, info, the inspector)."""
    return f"`haiku-ingester reprocess --db-name {name}`" if name is not None else "`haiku-ingester reprocess`"

PACKAGES = ("haiku-core", "haiku-rag-cli", "haiku-ingester", "lancedb")


@dataclass
class Check:
    """One line of `doctor`: what was checked, how it went, and about which database."""

    name: str
    status: Status
    detail: str
    database: str | None = None  # which database, when the check is about one over a set


@dataclass(frozen=True)
class DatabaseInfo(StoreInfo):
    """Everything `haiku-rag info` reports about one database: the store's own report,
    where the configuration puts the database, and the installed package versions."""

    configured_location: str
    packages: dict[str, str] = field(default_factory=dict)


def package_versions() -> dict[str, str]:
    """The installed versions of the packages `info` names; absent ones are left out."""
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


async def database_info(store: Store, ref: DatabaseRef) -> DatabaseInfo:
    report = await store.report.info()
    fields = {f.name: getattr(report, f.name) for f in dataclasses.fields(report)}
    return DatabaseInfo(**fields, configured_location=str(ref.location), packages=package_versions())


# --- doctor --------------------------------------------------------------------------------


def identity_check(recorded: EmbedderIdentity | None, configured: EmbedderIdentity, name: str | None) -> Check:
    """The database's embedder against the configuration, by the rule opening a database applies."""
    from haiku.core.embedders import check_identity_on_open

    if recorded is None:
        return Check("embedder", "warn", "the database records no embedder identity")
    try:
        with warnings.catch_warnings(record=True) as drift:
            warnings.simplefilter("always")
            check_identity_on_open(recorded, configured, read_only=True, name=name)
    except ConfigMismatchError as exc:
        return Check("embedder", "fail", str(exc))
    if drift:
        return Check("embedder", "warn", f"{drift[0].message}; reads work, writes are refused")
    return Check("embedder", "ok", recorded.describe())


def processing_check(recorded: dict[str, Any] | None, config: AppConfig, documents: int, name: str) -> Check:
    """The settings the database's chunks were made with against the configured ones (docs/ingester.md)."""
    from haiku.core.processing_identity import compare_processing, processing_identity

    drift = compare_processing(recorded, processing_identity(config), documents=documents)
    status: Status = "ok" if drift.state in ("matches", "empty") else "warn"
    return Check("processing", status, drift.predicate(name, reprocess=reprocess_command(name)))


def shared_embedder_check(identities: list[tuple[str | None, EmbedderIdentity | None]]) -> Check:
    """Whether the databases that opened record one embedder; not checked with fewer than two."""
    from haiku.core.embedders import check_selection_identities

    name = "embedders across databases"
    known = [(label, identity) for label, identity in identities if identity is not None]
    if len(known) < 2:
        return Check(name, "warn", f"not checked: {len(known)} of {len(identities)} databases opened with an embedder recorded")
    try:
        check_selection_identities(known)
    except ConfigMismatchError as exc:
        return Check(name, "fail", f"{exc}; full-text search (-s fts) still works")
    if len(known) < len(identities):
        return Check(name, "ok", f"the {len(known)} of {len(identities)} databases that opened record the same embedder")
    return Check(name, "ok", "every database records the same embedder")


def fts_check(state: dict[str, Any], chunks: int) -> Check:
    if chunks == 0:
        return Check("fts index", "ok", "no chunks yet")
    if not state.get("exists"):
        return Check("fts index", "fail", f"no full-text index over {chunks} chunks; the next ingester write builds it")
    if state.get("covers_none"):
        return Check("fts index", "warn", "the full-text index covers none of the chunks; the next write rebuilds it")
    unindexed = state.get("unindexed_rows") or 0
    if unindexed:
        return Check("fts index", "warn", f"{unindexed} of {chunks} chunks not yet in the full-text index")
    return Check("fts index", "ok", f"covers all {chunks} chunks")


def orphan_check(orphans: int) -> Check:
    if not orphans:
        return Check("orphan chunks", "ok", "none")
    return Check(
        "orphan chunks", "warn",
        f"{orphans} chunks no reader shows (their document is gone, or an update was cut short); "
        "the next ingester write removes them",
    )


async def database_checks(ref: DatabaseRef, config: AppConfig) -> tuple[list[Check], EmbedderIdentity | None]:
    """The checks of one database, and the embedder identity it records (None if unknown)."""
    from haiku.core.embedders import EmbedderIdentity
    from haiku.core.store import Store

    try:
        if not ref.given and not await Store.exists(ref, config):
            return [not_created_check(ref, config)], None
        store = await Store.open(ref, config, read_only=True, skip_validation=True, writes_documents=False)
    except (HaikuError, OSError) as exc:
        return [Check("database", "fail", str(exc))], None
    try:
        at = f" at tag '{ref.tag}'" if ref.tag else ""
        checks = [Check("database", "ok", f"'{ref.label}' opens{at} ({store.location})")]
        pending = store.migrator.pending_migrations()
        checks.append(
            Check("migrations", "fail", f"{len(pending)} pending; run `haiku-rag migrate`")
            if pending
            else Check("migrations", "ok", f"schema version {store.schema_version}, none pending")
        )
        configured = EmbedderIdentity.from_config(config.embeddings.model)
        checks.append(identity_check(store.identity, configured, ref.label))
        checks.append(processing_check(store.processing_identity, config, await store.reads.count_documents(), ref.label))
        checks.append(fts_check((await store.indexes.index_state())["fts"], await store.reads.count_chunks()))
        checks.append(orphan_check(await store.reads.count_orphan_chunks()))
        return checks, store.identity
    finally:
        await store.close()


def not_created_check(ref: DatabaseRef, config: AppConfig) -> Check:
    """A configured database that does not exist yet: before the first ingest, the ingester makes it."""
    name = ref.label
    ingested = name in config.ingester.databases
    how = (
        "haiku-ingester creates it on its first run (`haiku-ingester run-batch`, or `serve`)"
        if ingested
        else "haiku-ingester creates it once ingester.databases names it"
    )
    return Check(
        "database", "warn" if ingested else "fail",
        f"'{name}' does not exist yet: {how}; `haiku-rag --db-name {name} init` creates it empty",
    )


async def _reachable(url: str, api_key: str | None) -> str | None:
    """None when the endpoint answers at all; else why not, naming the URL tried."""
    import httpx

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        async with httpx.AsyncClient(timeout=5) as http:
            await http.get(url, headers=headers)
    except httpx.HTTPError as exc:
        return f"{url} did not answer ({type(exc).__name__}: {exc})"
    return None


async def provider_checks(config: AppConfig) -> list[Check]:
    from haiku.core.embedders import local_model_path

    checks: list[Check] = []
    model = config.embeddings.model
    if model.provider == "sentence-transformers":
        try:
            path = Path(local_model_path(model.name))
            checks.append(Check("embedding model", "ok" if path.exists() else "fail", f"{model.name} at {path}"))
        except (HaikuError, OSError) as exc:
            checks.append(Check("embedding model", "fail", str(exc)))
    else:
        url = f"{(model.base_url or '').rstrip('/')}/models"
        problem = await _reachable(url, model.api_key)
        checks.append(Check("embedding model", "fail" if problem else "ok", problem or f"{model.name} at {url}"))
    rerank = config.reranking.model
    if rerank is not None and rerank.provider == "http":
        problem = await _reachable(rerank.base_url or "", rerank.api_key)
        checks.append(Check("reranker", "fail" if problem else "ok", problem or f"{rerank.name} at {rerank.base_url}"))
    elif rerank is not None:
        exists = Path(rerank.name).expanduser().exists()
        checks.append(Check("reranker", "ok" if exists else "warn", f"cross-encoder {rerank.name}"))
    qa = config.qa.model
    problem = await _reachable(f"{qa.base_url.rstrip('/')}/models", qa.api_key)
    # Search works without the question-answering model, so it only warns.
    checks.append(
        Check("qa model", "warn" if problem else "ok", (problem + "; `ask` will fail") if problem else f"{qa.name} at {qa.base_url}")
    )
    return checks


async def doctor(config: AppConfig, scope: DatabaseScope, *, skip_providers: bool = False) -> list[Check]:
    """Every `haiku-rag doctor` check: the configuration, each database in ``scope``, the providers.

    Over a set each database check names its database, and one more check says
    whether the set shares an embedder. Details have credentials in URLs masked.
    """
    from haiku.core.config import config_lookup
    from haiku.core.masking import mask_urls

    where = (
        str(config.config_path)
        if config.config_path
        else f"defaults: no config file found (looked at: {'; '.join(config_lookup('--config'))})"
    )
    checks = [Check("config", "ok", where)]
    identities: list[tuple[str | None, EmbedderIdentity | None]] = []
    for ref in scope.databases:
        found, identity = await database_checks(ref, config)
        if scope.covers_multiple:
            for check in found:
                check.database = ref.label
        checks += found
        identities.append((ref.label, identity))
    if scope.covers_multiple:
        checks.append(shared_embedder_check(identities))
    if not skip_providers:
        checks += await provider_checks(config)
    return [dataclasses.replace(c, detail=mask_urls(c.detail)) for c in checks]
