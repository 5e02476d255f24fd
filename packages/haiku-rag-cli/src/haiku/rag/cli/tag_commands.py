"""`haiku-rag tag create|list|delete|restore`: tags of one live database (docs/storage.md)."""

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from haiku.core.errors import database_label
from haiku.rag.cli._common import (
    client_command,
    db_option,
    echo_json,
    json_option,
    one_scope,
    options,
    run,
    writable_scope,
)
from haiku.rag.cli._output import shown_location
from haiku.rag.cli._ownership import keep_ingester_out

if TYPE_CHECKING:
    from haiku.core.scope import DatabaseScope
    from haiku.core.store import OwnershipLock, TagInfo

tag_app = typer.Typer(help="Create, list, delete and restore tags of one database.", no_args_is_help=True)


def _tag_json(tag) -> dict:
    return {"name": tag.name, "versions": dict(tag.versions), "missing": list(tag.missing), "complete": tag.complete}


def _tag_line(tag) -> str:
    versions = " ".join(f"{table}=v{version}" for table, version in sorted(tag.versions.items()))
    line = f"  {tag.name}: {versions}"
    if tag.missing:
        line += f" (partial - missing: {', '.join(tag.missing)})"
    return line


@tag_app.command("create")
def create(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="The tag name."),
    db: Path | None = db_option(),
    as_json: bool = json_option("the tag"),
) -> None:
    """Tag the current version of every table."""

    def show(tag: "TagInfo", scope: "DatabaseScope") -> None:
        if as_json:
            echo_json({"database": scope.databases[0].label, "tag": _tag_json(tag)})
            return
        typer.echo(f"Tag '{name}' created on {database_label(scope.databases[0].label)}")
        typer.echo(_tag_line(tag))

    client_command(
        ctx, lambda opts: writable_scope(opts, db, "tag create", verb="tags"), lambda client: client.database().create_tag(name),
        show, read_only=False,
    )


@tag_app.command("list")
def list_tags(
    ctx: typer.Context,
    db: Path | None = db_option(),
    as_json: bool = typer.Option(False, "--json", help="Print the tags as JSON."),
) -> None:
    """List the tags with the table versions they point at."""

    def show(tags: "list[TagInfo]", _: "DatabaseScope") -> None:
        if as_json:
            echo_json([_tag_json(t) for t in tags])
        elif not tags:
            typer.echo("No tags")
        else:
            typer.echo("Tags")
            for tag in tags:
                typer.echo(_tag_line(tag))

    client_command(
        ctx, lambda opts: one_scope(opts, db, live="`haiku-rag tag list` reads"), lambda client: client.database().list_tags(),
        show, skip_validation=True,
    )


@tag_app.command("delete")
def delete(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="The tag name."),
    db: Path | None = db_option(),
    as_json: bool = json_option("the outcome"),
) -> None:
    """Remove a tag from every table carrying it (the versions may then be vacuumed)."""

    def show(_: object, scope: "DatabaseScope") -> None:
        if as_json:
            echo_json({"database": scope.databases[0].label, "tag": name, "deleted": True})
        else:
            typer.echo(f"Tag '{name}' deleted")

    client_command(
        ctx, lambda opts: writable_scope(opts, db, "tag delete"), lambda client: client.database().delete_tag(name), show,
        read_only=False,
    )


@tag_app.command("restore")
def restore(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="The tag to restore."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
    force: bool = typer.Option(
        False, "--force", help="Restore even while haiku-ingester owns the database (warned; stop it instead)."
    ),
    db: Path | None = db_option(),
    as_json: bool = json_option("the outcome"),
) -> None:
    """Make the state at a tag the current state (a safety tag keeps the state before).

    Refused while haiku-ingester owns the database, unless --force.
    """

    async def check() -> "tuple[DatabaseScope, OwnershipLock | None]":
        scope = writable_scope(options(ctx), db, "tag restore")
        return scope, await keep_ingester_out(scope.databases[0], "tag restore", force=force)

    scope, lock = run(check)
    ref = scope.databases[0]
    try:
        if not yes:
            typer.echo(
                f"Warning: this restores {database_label(ref.label)} at {shown_location(ref.location)} to tag '{name}'.\n"
                "Stop every writer (haiku-ingester) of this database first. The current state is kept "
                "under a safety tag named before-restore-<time>.",
                err=True,
            )
            if not typer.confirm("Restore?", default=False, err=True):
                typer.echo("Restore cancelled.", err=True)
                raise typer.Exit(1)

        def show(safety: str, _: "DatabaseScope") -> None:
            if as_json:
                echo_json({"database": ref.label, "tag": name, "safety_tag": safety})
            else:
                typer.echo(f"Restored tag '{name}'; the previous state is kept under tag '{safety}'")

        client_command(ctx, lambda _: scope, lambda client: client.database().restore_tag(name), show, read_only=False)
    finally:
        if lock is not None:
            lock.release()


def register(app: typer.Typer) -> None:
    app.add_typer(tag_app, name="tag")
