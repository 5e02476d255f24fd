"""`haiku-rag inspect`: browse the databases in a terminal, or serve the same screen to a browser.

It covers the configured set, or the one database --db-name, --db or --at
selects, and always opens read-only (docs/cli.md, "inspect"). Textual and
textual-serve load inside the command, never at import.
"""

from __future__ import annotations

import os
import secrets
import sys
from dataclasses import dataclass
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
        None, "--token", help="Access token the browser must present (shows in `ps`: prefer --token-file)."
    ),
    token_file: Path | None = typer.Option(
        None, "--token-file", help="Read the access token from this file (or set HAIKU_INSPECT_TOKEN)."
    ),
    allow_host: list[str] = typer.Option(
        [], "--allow-host", help="Another name the server answers to without a token (repeatable)."
    ),
    max_sessions: int = typer.Option(4, "--max-sessions", min=1, help="Browser sessions served at once."),
    exit_after_first_screen: bool = typer.Option(False, "--exit-after-first-screen", hidden=True),
) -> None:
    """Browse databases, documents, chunks and their pages; / searches, c shows a chunk's context."""
    if serve:
        served = _Served(host, port, _token(token, token_file), tuple(allow_host), max_sessions)
        _serve(ctx, db, at, served)
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


TOKEN_ENV = "HAIKU_INSPECT_TOKEN"


@dataclass(frozen=True)
class _Served:
    host: str
    port: int
    token: str | None
    allow_hosts: tuple[str, ...]
    max_sessions: int


def _token(given: str | None, token_file: Path | None) -> str | None:
    """The access token: --token (warned about: every user sees it in `ps`), --token-file, or HAIKU_INSPECT_TOKEN."""
    if given is not None and token_file is not None:
        raise fail("give the token once: --token or --token-file, not both")
    if given is not None:
        typer.echo(
            f"Warning: --token shows in `ps` to every user of this machine; use --token-file or {TOKEN_ENV}",
            err=True,
        )
        token = given.strip()
        where = "--token"
    elif token_file is not None:
        try:
            # Bytes that are not UTF-8 read as U+FFFD: such a token matches nothing a browser sends.
            token = token_file.read_text(encoding="utf-8", errors="replace").strip()
        except OSError as exc:
            raise fail(f"cannot read the token file {token_file}: {exc.strerror or exc}") from None
        where = f"the token file {token_file}"
    else:
        token = os.environ.get(TOKEN_ENV, "").strip()
        if not token:
            return None
        where = TOKEN_ENV
    if not token:
        raise fail(f"{where} holds no token")
    return token


def _child_command(opts: GlobalOptions, db: Path | None, at: str | None) -> list[str]:
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
    return argv


def _serve(ctx: typer.Context, db: Path | None, at: str | None, served: _Served) -> None:
    from haiku.rag.mcp import exposure_warning

    opts = options(ctx)
    scope: DatabaseScope = set_scope(opts, db, at)  # a bad selection fails here, before serving
    host, port, token = served.host, served.port, served.token
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
        serve_inspector(
            _child_command(opts, db, at), host=host, port=port, token=token,
            allow_hosts=served.allow_hosts, max_sessions=served.max_sessions, log=_stderr,
        )
    except KeyboardInterrupt:
        raise typer.Exit(0) from None


def _stderr(line: str) -> None:
    typer.echo(line, err=True)


def register(app: typer.Typer) -> None:
    app.command("inspect")(inspect)
