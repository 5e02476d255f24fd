"""`haiku-rag doctor`: one line per check of each selected database and the configured providers.

Over a set it checks every configured database (tagged entries at their tag),
labels each line with the database, and checks the rule searching them together
relies on: one embedder across them.
"""

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer

from haiku.rag.cli._common import db_option, echo_json, expected_errors, options, run, set_scope


@dataclass
class Check:
    name: str
    status: str  # ok | warn | fail
    detail: str
    database: str | None = None  # which database, when the check is about one


async def _database_checks(opts, ref) -> tuple[list[Check], Any]:
    """The checks of one database, and the embedder identity it records (None if unknown)."""
    from haiku.core.embedders import EmbedderIdentity
    from haiku.core.store import Store

    config = opts.config()
    checks: list[Check] = []
    identity = None
    try:
        exists = await Store.exists(ref, config)
    except expected_errors() as exc:
        return [Check("database", "fail", str(exc))], None
    if not exists:
        from haiku.rag.cli.database_commands import missing_message

        return [Check("database", "fail", missing_message(ref))], None
    try:
        store = await Store.open(ref, config, read_only=True, skip_validation=True)
    except expected_errors() as exc:
        return [Check("database", "fail", str(exc))], None
    try:
        identity = store.identity
        at = f" at tag '{ref.tag}'" if ref.tag else ""
        checks.append(Check("database", "ok", f"'{ref.label}' opens{at} ({store.location})"))
        pending = store.pending_migrations()
        checks.append(
            Check("migrations", "fail", f"{len(pending)} pending; run `haiku-rag migrate`")
            if pending
            else Check("migrations", "ok", f"schema version {store.schema_version}, none pending")
        )
        checks.append(_identity_check(store.identity, EmbedderIdentity.from_config(config.embeddings.model), ref.label))
        state = (await store.index_state())["fts"]
        chunks = await store.count_chunks()
        checks.append(_fts_check(state, chunks))
        orphans = await _orphan_chunks(store)
        checks.append(
            Check(
                "orphan chunks", "warn",
                f"{orphans} chunks no reader shows (their document is gone, or an update was cut short); "
                "the next ingester write removes them",
            )
            if orphans
            else Check("orphan chunks", "ok", "none")
        )
    finally:
        await store.close()
    return checks, identity


def _shared_embedder_check(identities: list[tuple[str | None, Any]]) -> Check:
    from haiku.core.embedders import check_selection_identities
    from haiku.core.errors import ConfigMismatchError

    try:
        check_selection_identities(identities)
    except ConfigMismatchError as exc:
        return Check("embedders across databases", "fail", f"{exc}; full-text search (-s fts) still works")
    return Check("embedders across databases", "ok", "every database records the same embedder")


def _identity_check(recorded, configured, label: str) -> Check:
    if recorded is None:
        return Check("embedder", "warn", "the database records no embedder identity")
    if recorded.vector_dim != configured.vector_dim:
        return Check(
            "embedder", "fail",
            f"'{label}' records {recorded.describe()}, the configuration uses {configured.describe()}; "
            f"re-embed with `haiku-ingester rebuild --db-name {label}`",
        )
    if recorded != configured:
        return Check(
            "embedder", "warn",
            f"'{label}' records {recorded.describe()}, the configuration uses {configured.describe()}; "
            "reads work, writes are refused",
        )
    return Check("embedder", "ok", recorded.describe())


def _fts_check(state: dict[str, Any], chunks: int) -> Check:
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


async def _orphan_chunks(store) -> int:
    """Chunks no reader shows: no document row, or another revision than the row's (docs/storage.md)."""
    from haiku.core.store.schema import REVISION

    has_revision = REVISION in (await store.table("chunks").schema()).names
    chunk_columns = ["document_id", REVISION] if has_revision else ["document_id"]
    chunks = (await store.table("chunks").query().select(chunk_columns).to_arrow()).to_pylist()
    doc_columns = ["id", REVISION] if has_revision else ["id"]
    documents = (await store.table("documents").query().select(doc_columns).to_arrow()).to_pylist()
    revisions = {row["id"]: row.get(REVISION) for row in documents}
    return sum(
        1 for row in chunks if row["document_id"] not in revisions or row.get(REVISION) != revisions[row["document_id"]]
    )


async def _reachable(url: str, api_key: str | None) -> str | None:
    """None when the endpoint answers at all; else why not."""
    import httpx

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        async with httpx.AsyncClient(timeout=5) as http:
            await http.get(url, headers=headers)
    except httpx.HTTPError as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


async def _provider_checks(config) -> list[Check]:
    from haiku.core.embedders import local_model_path

    checks: list[Check] = []
    model = config.embeddings.model
    if model.provider == "sentence-transformers":
        try:
            path = Path(local_model_path(model.name))
            status = "ok" if path.exists() else "fail"
            checks.append(Check("embedding model", status, f"{model.name} at {path}"))
        except expected_errors() as exc:
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


def doctor(
    ctx: typer.Context,
    skip_providers: bool = typer.Option(False, "--skip-providers", help="Do not contact model endpoints."),
    db: Path | None = db_option(),
    as_json: bool = typer.Option(False, "--json", help="Print the checks as JSON."),
) -> None:
    """Check the configuration, every configured database (or the one selected) and the model providers."""
    opts = options(ctx)

    async def work() -> list[Check]:
        config = opts.config()
        where = str(config.config_path) if config.config_path else "defaults (no config file found)"
        checks = [Check("config", "ok", where)]
        scope = set_scope(opts, db)
        identities = []
        for ref in scope.databases:
            found, identity = await _database_checks(opts, ref)
            if scope.covers_multiple:
                for check in found:
                    check.database = ref.label
            checks += found
            identities.append((ref.label, identity))
        if scope.covers_multiple:
            checks.append(_shared_embedder_check(identities))
        if not skip_providers:
            checks += await _provider_checks(config)
        return checks

    from haiku.core.masking import mask_urls

    checks = [dataclasses.replace(c, detail=mask_urls(c.detail)) for c in run(work)]
    if as_json:
        echo_json([check.__dict__ for check in checks])
    else:
        for check in checks:
            where = f"[{check.database}] " if check.database else ""
            typer.echo(f"{check.status:<5} {where}{check.name}: {check.detail}")
    if any(check.status == "fail" for check in checks):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor)
