"""`haiku-rag inspect`: browse the databases in a terminal, or serve the same screen to a browser.

It covers the configured set, or the one database --db-name, --db or --at
selects, and always opens read-only (docs/cli.md, "inspect"). Textual and
textual-serve load inside the command, never at import.
"""

from __future__ import annotations

import os
import secrets
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from haiku.rag.cli._common import (
    GlobalOptions,
    at_option,
    check_port,
    client_command,
    db_option,
    fail,
    options,
    set_scope,
)

if TYPE_CHECKING:
    from haiku.core.scope import DatabaseScope
    from haiku.rag.client import HaikuRAG


def inspect(
    ctx: typer.Context,
    db: Path | None = db_option(),
    at: str | None = at_option(),
    serve: bool = typer.Option(False, "--serve", help="Serve the inspector to a web browser instead."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind with --serve."),
    port: int = typer.Option(8765, "--port", min=1, max=65535, help="Port to bind with --serve."),
    token: str | None = typer.Option(
        None, "--token", help="Access token the browser must present (required off loopback; generated if absent)."
    ),
    exit_after_first_screen: bool = typer.Option(False, "--exit-after-first-screen", hidden=True),
) -> None:
    """Browse databases, documents, chunks and their pages; / searches, c shows a chunk's context."""
    if serve:
        _serve(ctx, db, at, host, port, token)
        return

    def select(opts: GlobalOptions) -> DatabaseScope:
        scope = set_scope(opts, db, at)
        # A browser connection runs the inspector on pipes, with Textual's web driver named.
        if not (sys.stdout.isatty() and sys.stdin.isatty()) and "TEXTUAL_DRIVER" not in os.environ:
            raise fail("haiku-rag inspect needs a terminal (or --serve, to use a web browser)")
        return scope

    async def browse(client: HaikuRAG) -> None:
        from haiku.rag.apps.inspector import Catalog
        from haiku.rag.apps.inspector.app import InspectorApp

        await InspectorApp(Catalog(client), exit_after_first_screen=exit_after_first_screen).run_async()

    client_command(ctx, select, browse)


def _child_command(opts: GlobalOptions, db: Path | None, at: str | None) -> str:
    """The inspector each browser connection runs: this scope, in a process of its own."""
    argv = [sys.executable, "-m", "haiku.rag.cli"]
    if opts.config_path is not None:
        argv += ["--config", str(opts.config_path.resolve())]
    if opts.db_name is not None:
        argv += ["--db-name", opts.db_name]
    argv.append("inspect")
    if db is not None:
        argv += ["--db", str(db.resolve())]
    if at is not None:
        argv += ["--at", at]
    return shlex.join(argv)


def _serve(ctx: typer.Context, db: Path | None, at: str | None, host: str, port: int, token: str | None) -> None:
    from haiku.rag.mcp import exposure_warning

    opts = options(ctx)
    scope: DatabaseScope = set_scope(opts, db, at)  # a bad selection fails here, before serving
    check_port(host, port)
    if exposure_warning(host) is not None:
        if token is None:
            token = secrets.token_urlsafe(24)
            typer.echo(f"Access token (generated): {token}", err=True)
        typer.echo(
            f"Warning: --host {host} is not a loopback address: anyone who can reach it and has the token "
            "can read every document of " + ", ".join(ref.label for ref in scope.databases),
            err=True,
        )
    from haiku.rag.apps.inspector.serve import serve_inspector

    try:
        serve_inspector(_child_command(opts, db, at), host=host, port=port, token=token, log=_stderr)
    except KeyboardInterrupt:
        raise typer.Exit(0) from None


def _stderr(line: str) -> None:
    typer.echo(line, err=True)


def register(app: typer.Typer) -> None:
    app.command("inspect")(inspect)
