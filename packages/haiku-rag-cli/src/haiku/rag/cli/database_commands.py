"""Commands on one database: info, init, migrate, vacuum, create-index, history (docs/storage.md)."""

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from haiku.core.errors import database_label
from haiku.rag.cli._common import (
    at_option,
    client_command,
    client_for,
    db_option,
    echo_json,
    json_option,
    one_scope,
    options,
    refuse_read_only,
    run,
    writable_scope,
)
from haiku.rag.cli._output import shown_location

if TYPE_CHECKING:
    from haiku.core.scope import DatabaseScope
    from haiku.core.store import VacuumReport
    from haiku.rag.client import DatabaseInfo, HaikuRAG, History


def _index_line(state: dict[str, Any]) -> str:
    if not state.get("exists"):
        return "none"
    line = f"{state.get('type', 'yes')}, {state.get('indexed_rows', 0)} rows indexed"
    if state.get("unindexed_rows"):
        line += f", {state['unindexed_rows']} not yet indexed"
    if state.get("metric"):
        line += f", metric {state['metric']}"
    return line


def _print_info(info: "DatabaseInfo") -> None:
    from haiku.core.processing_identity import describe_recorded
    from haiku.rag.client import reprocess_command

    typer.echo(f"name: {info.name}")
    typer.echo(f"path: {shown_location(info.configured_location)}")
    if info.tag:
        typer.echo(f"tag: {info.tag} (read-only)")
    typer.echo(f"schema version: {info.schema_version} (this code: {info.current_schema_version})")
    if info.embedder:
        embedder = info.embedder
        typer.echo(f"embedder: {embedder['provider']}/{embedder['model']} ({embedder['vector_dim']})")
    else:
        typer.echo("embedder: not recorded")
    typer.echo(f"vector dimension: {info.vector_dim}")
    typer.echo(f"processing: {describe_recorded(info.processing, documents=info.documents, reprocess=reprocess_command())}")
    typer.echo(f"documents: {info.documents}")
    typer.echo(f"chunks: {info.chunks}")
    typer.echo(f"fts index: {_index_line(info.fts_index or {})}")
    typer.echo(f"vector index: {_index_line(info.vector_index or {})}")
    typer.echo("table versions: " + " ".join(f"{t}=v{v}" for t, v in sorted(info.table_versions.items())))
    typer.echo(f"tags: {info.tags}")
    if info.pending_migrations:
        typer.echo(f"pending migrations: {len(info.pending_migrations)} (run `haiku-rag migrate`)")
        for step in info.pending_migrations:
            typer.echo(f"  - {step['version']}: {step['description']}")
    else:
        typer.echo("pending migrations: none")
    if info.rebuild_marker:
        typer.echo(f"rebuild: interrupted ({info.rebuild_marker}); rerun `haiku-ingester rebuild`")
    typer.echo("packages: " + ", ".join(f"{n} {v}" for n, v in info.packages.items()))


def info(
    ctx: typer.Context,
    db: Path | None = db_option(),
    at: str | None = at_option(),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Where the database is, its schema, embedder, counts, indexes, versions and tags."""

    def show(report: "DatabaseInfo", _: "DatabaseScope") -> None:
        if as_json:
            echo_json(report.as_dict())
        else:
            _print_info(report)

    client_command(ctx, lambda opts: one_scope(opts, db, at=at), lambda client: client.database().info(), show, skip_validation=True)


def init(ctx: typer.Context, db: Path | None = db_option(), as_json: bool = json_option("the outcome")) -> None:
    """Create the database (an existing one is left as it is)."""
    opts = options(ctx)

    async def work() -> None:
        from haiku.core.store import Store

        scope = one_scope(opts, db, live="`haiku-rag init` creates")
        ref = scope.databases[0]
        created = not await Store.exists(ref, opts.config())
        if created:
            refuse_read_only(opts, scope, "init")
            async with client_for(opts, scope, read_only=False, create=True):
                pass
        location = shown_location(ref.location)
        if as_json:
            echo_json({"database": ref.label, "location": location, "created": created})
        else:
            typer.echo(f"Database {'initialized' if created else 'already exists'} at {location}")

    run(work)


def migrate(ctx: typer.Context, db: Path | None = db_option(), as_json: bool = json_option("the outcome")) -> None:
    """Apply pending schema migrations."""

    def show(applied: list[str], scope: "DatabaseScope") -> None:
        if as_json:
            echo_json({"database": scope.databases[0].label, "applied": applied})
            return
        if not applied:
            typer.echo("No migrations pending. Database is up to date.")
            return
        typer.echo(f"Applied {len(applied)} migration(s):")
        for line in applied:
            typer.echo(f"  - {line}")
        typer.echo("Migration completed successfully.")

    client_command(
        ctx, lambda opts: writable_scope(opts, db, "migrate"), lambda client: client.database().migrate(), show,
        read_only=False, prefix="Migration failed: ", skip_validation=True,
    )


def _size(count: int) -> str:
    size = float(count)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{count} bytes" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{count} bytes"  # pragma: no cover


def vacuum(
    ctx: typer.Context,
    retention_seconds: int | None = typer.Option(
        None, "--retention-seconds", min=0, help="Keep versions newer than this many seconds (default: storage.vacuum_retention_seconds)."
    ),
    db: Path | None = db_option(),
    as_json: bool = json_option("the outcome"),
) -> None:
    """Compact files, optimise indexes and drop old versions (tagged versions are kept)."""

    def show(report: "VacuumReport | None", scope: "DatabaseScope") -> None:
        if as_json:
            outcome = {"vacuumed": False, "reason": "a vacuum of this database is already running"}
            if report is not None:
                outcome = {"vacuumed": True, **dataclasses.asdict(report)}
            echo_json({"database": scope.databases[0].label, **outcome})
            return
        if report is None:
            typer.echo("A vacuum of this database is already running.")
            return
        versions = f"{report.versions_removed} old table version{'' if report.versions_removed == 1 else 's'}"
        typer.echo(f"Vacuum completed successfully. Removed {versions}, {_size(report.bytes_removed)}.")

    client_command(
        ctx, lambda opts: writable_scope(opts, db, "vacuum"), lambda client: client.database().vacuum(retention_seconds), show,
        read_only=False,
    )


def create_index(
    ctx: typer.Context,
    db: Path | None = db_option(),
    as_json: bool = json_option("the outcome"),
    strict: bool = typer.Option(False, "--strict", help="Exit 1 when too few chunks leave no index created."),
) -> None:
    """Build the vector index (IVF-SQ); needs at least 256 chunks."""
    from haiku.core.store.indexes import MIN_VECTOR_INDEX_ROWS

    async def call(client: "HaikuRAG") -> tuple[bool, int]:
        return await client.database().create_index(), await client.count_chunks()

    def show(outcome: tuple[bool, int], scope: "DatabaseScope") -> None:
        built, chunks = outcome
        name = scope.databases[0].label
        if as_json:
            echo_json({"database": name, "created": built, "chunks": chunks, "minimum_chunks": MIN_VECTOR_INDEX_ROWS})
        elif built:
            typer.echo(f"Vector index created on {database_label(name)} ({chunks} chunks).")
        else:
            typer.echo(
                f"Warning: {database_label(name)} has {chunks} chunks; a vector index needs at least "
                f"{MIN_VECTOR_INDEX_ROWS}, so none was created (searches stay exact).",
                err=True,
            )
        if strict and not built:
            raise typer.Exit(1)

    client_command(ctx, lambda opts: writable_scope(opts, db, "create-index"), call, show, read_only=False)


def history(
    ctx: typer.Context,
    table: str | None = typer.Option(None, "--table", "-t", help="Only this table."),
    limit: int | None = typer.Option(None, "--limit", "-l", min=1, help="Newest N versions per table."),
    db: Path | None = db_option(),
    as_json: bool = typer.Option(False, "--json", help="Print the history as JSON."),
) -> None:
    """Table versions, newest first, with the tags pointing at them."""

    def show(history: "History", _: "DatabaseScope") -> None:
        for notice in history.notices:
            typer.echo(f"Notice: {notice}", err=True)
        if as_json:
            echo_json(history.as_dict())
            return
        for name, rows in history.tables.items():
            typer.echo(f"{name}:")
            for entry in rows:
                tags = f"  <- {', '.join(entry.tags)}" if entry.tags else ""
                typer.echo(f"  v{entry.version}: {entry.timestamp.isoformat()}{tags}")

    client_command(
        ctx, lambda opts: one_scope(opts, db, live="`haiku-rag history` reads"),
        lambda client: client.database().history(table, limit), show, skip_validation=True,
    )


def register(app: typer.Typer) -> None:
    app.command("info")(info)
    app.command("init")(init)
    app.command("migrate")(migrate)
    app.command("vacuum")(vacuum)
    app.command("create-index")(create_index)
    app.command("history")(history)
