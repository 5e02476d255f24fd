"""What every `haiku-rag` command shares: global options, the scope rules (docs/cli.md), errors.

The CLI decides only what it knows (that --db and --db-name say the same
thing twice, whether a command reads one database or a set) and hands the
resolved scope to the client. It never rewrites the configuration, so a
named database keeps its name and a remote one opens its configured URI.
"""

import asyncio
import os
import socket
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import typer

from haiku.core.errors import (
    AmbiguousDatabaseError,
    HaikuError,
    ReadOnlyError,
    SourceUnavailableError,
    database_label,
)
from haiku.rag.cli._hints import error_text

if TYPE_CHECKING:
    from haiku.core.config import AppConfig
    from haiku.core.scope import DatabaseScope
    from haiku.rag.client import HaikuRAG

T = TypeVar("T")


@dataclass
class GlobalOptions:
    config_path: Path | None = None
    db_name: str | None = None
    read_only: bool = False
    _config: Any = None

    def config(self) -> "AppConfig":
        if self._config is None:
            from haiku.core.config import load_config

            self._config = load_config(self.config_path)
        return self._config


def explain_unconfigured(opts: GlobalOptions, error: SourceUnavailableError) -> SourceUnavailableError:
    """A missing default database, when no configuration file was found: say where one was looked for."""
    from haiku.core.config import DEFAULT_DATABASE_NAME, config_lookup

    config = opts.config()
    configured = config.lancedb.databases or config.lancedb.uri is not None
    if config.config_path is not None or configured or error.database != DEFAULT_DATABASE_NAME:
        return error
    return SourceUnavailableError.unconfigured(DEFAULT_DATABASE_NAME, config_lookup("--config"), config.data_dir)


def options(ctx: typer.Context) -> GlobalOptions:
    root = ctx.find_root()
    if not isinstance(root.obj, GlobalOptions):
        root.obj = GlobalOptions()
    return root.obj


def _check_db_path(value: Path | None) -> Path | None:
    if value is not None and not value.stem:
        raise typer.BadParameter(f"{value} has no name (stem) to call the database by")
    return value


def db_option() -> Any:
    return typer.Option(
        None,
        "--db",
        help="Open this local database path (named by its stem), whatever is configured.",
        callback=_check_db_path,
        show_default=False,
    )


def _check_query(value: str) -> str:
    from haiku.core.errors import EmptyQueryError

    try:
        EmptyQueryError.check(value)
    except EmptyQueryError as exc:
        raise typer.BadParameter(str(exc)) from None
    return value


def query_argument(help: str) -> Any:
    """A search query or question: an empty or blank one is a usage error (exit 2), before anything opens."""
    return typer.Argument(..., help=help, callback=_check_query)


def optional_query_argument(help: str) -> Any:
    """``query_argument`` for a command that can take another kind of query instead (``search --image``)."""
    return typer.Argument(None, help=help, callback=lambda value: value if value is None else _check_query(value))


def json_option(what: str) -> Any:
    return typer.Option(False, "--json", help=f"Print {what} as JSON (docs/cli.md).")


def at_option() -> Any:
    return typer.Option(None, "--at", help="Read the one selected database as it was at this tag (read-only).")


def _with_tag(scope: "DatabaseScope", at: str | None) -> "DatabaseScope":
    if at is None:
        return scope
    if scope.covers_multiple:
        raise AmbiguousDatabaseError.needs_one(scope.names, operation="--at")
    from haiku.core.scope import DatabaseScope

    return DatabaseScope((scope.databases[0].at_tag(at),))


def _selected(opts: GlobalOptions, db: Path | None) -> "DatabaseScope":
    from haiku.core.scope import DatabaseScope

    if db is not None:
        if opts.db_name is not None:
            raise AmbiguousDatabaseError(
                f"--db-name {opts.db_name} and --db {db} both name a database; pass --db or --db-name, not both"
            )
        return DatabaseScope.at(db)
    return DatabaseScope.resolve(opts.config(), database_name=opts.db_name)


def set_scope(opts: GlobalOptions, db: Path | None, at: str | None = None) -> "DatabaseScope":
    """search, ask, chat, mcp: the configured set, or the one database selected."""
    return _with_tag(_selected(opts, db), at)


def limited_set_scope(opts: GlobalOptions, db: Path | None, at: str | None, limit: int | None) -> "DatabaseScope":
    """search, list: ``set_scope``, once ``--limit`` is found within ``search.max_limit``
    (checked before anything opens; the client checks it too)."""
    from haiku.core.errors import LimitTooLargeError

    LimitTooLargeError.check(limit, opts.config().search.max_limit, what="--limit")
    return set_scope(opts, db, at)


def one_scope(
    opts: GlobalOptions, db: Path | None, *, at: str | None = None, live: str | None = None
) -> "DatabaseScope":
    """Every other command: exactly one database.

    ``live`` completes "…, and LIVE the live database" for commands that take
    no --at and so refuse an entry configured at a tag.
    """
    scope = _selected(opts, db)
    if scope.covers_multiple:
        raise AmbiguousDatabaseError.needs_one(scope.names)
    if live is not None:
        scope.refuse_tags(live)
    return _with_tag(scope, at)


def refuse_read_only(opts: GlobalOptions, scope: "DatabaseScope", work: str) -> None:
    if opts.read_only:
        name = scope.databases[0].label
        raise ReadOnlyError(f"{database_label(name)}: --read-only was given, and {work} writes the database")


def client_for(
    opts: GlobalOptions, scope: "DatabaseScope", *, read_only: bool, **kwargs: Any
) -> "HaikuRAG":
    from haiku.rag.client import HaikuRAG

    return HaikuRAG.from_scope(scope, opts.config(), read_only=read_only or opts.read_only, **kwargs)


def client_command(
    ctx: typer.Context,
    select: Callable[[GlobalOptions], "DatabaseScope"],
    call: Callable[["HaikuRAG"], Awaitable[T]],
    show: Callable[[T, "DatabaseScope"], None] | None = None,
    *,
    read_only: bool = True,
    prefix: str = "",
    **open_options: Any,
) -> None:
    """The body of a command over the client: select the scope, open, ``call``, close, ``show``.

    ``show`` prints after the client is closed; like ``call``, it runs inside
    ``run``, so its errors and a closed pipe are handled as every command's are.
    """
    opts = options(ctx)

    async def work() -> None:
        scope = select(opts)
        try:
            async with client_for(opts, scope, read_only=read_only, **open_options) as client:
                value = await call(client)
        except SourceUnavailableError as error:
            raise explain_unconfigured(opts, error) from None
        if show is not None:
            show(value, scope)

    run(work, prefix=prefix)


def writable_scope(opts: GlobalOptions, db: Path | None, command: str, *, verb: str = "changes") -> "DatabaseScope":
    """The one live database a writing command works on, refused under --read-only.

    ``command`` names it in messages ("tag create"); ``verb`` completes
    "`haiku-rag COMMAND` VERB the live database".
    """
    scope = one_scope(opts, db, live=f"`haiku-rag {command}` {verb}")
    refuse_read_only(opts, scope, command)
    return scope


def expected_errors() -> tuple[type[BaseException], ...]:
    """Errors a user can act on (the product's own, and the file system's): ``Error: …``, exit 1.

    Every error haiku raises on purpose derives from ``HaikuError``; anything
    else is a bug and shows its traceback (docs/design.md).
    """
    return (HaikuError, OSError)


def fail(message: str) -> typer.Exit:
    from haiku.core.masking import mask_urls

    typer.echo(f"Error: {mask_urls(message)}", err=True)
    return typer.Exit(1)


def run(work: Callable[[], Awaitable[T]], *, prefix: str = "") -> T:
    """Run one command's async body; expected errors become ``Error: …`` and exit 1."""
    try:
        return asyncio.run(work())  # type: ignore[arg-type]
    except typer.Exit:
        raise
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly, as Unix tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise typer.Exit(141) from None
    except expected_errors() as exc:
        raise fail(f"{prefix}{error_text(exc)}") from None


def echo_json(data: Any) -> None:
    import json

    typer.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def check_port(host: str, port: int) -> None:
    """Fail with a plain message before the server starts when the address is taken."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise fail(f"cannot listen on {host}:{port}: {exc}") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            raise fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
