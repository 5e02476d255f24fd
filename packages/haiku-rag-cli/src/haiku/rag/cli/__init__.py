"""The `haiku-rag` command: search, read and look after databases (docs/cli.md).

Nothing here imports torch, sentence-transformers or docling: models load on
first use, so `--help`, `list`, `info` and `tag list` stay fast.
"""

import sys
import warnings
from pathlib import Path

import typer

from haiku.rag import __version__
from haiku.rag.cli import (
    analyze_commands,
    config_commands,
    database_commands,
    doctor_commands,
    document_commands,
    search_commands,
    structure_commands,
    tag_commands,
)
from haiku.rag.cli._arguments import GlobalOptionsAnywhere
from haiku.rag.cli._common import GlobalOptions, expected_errors
from haiku.rag.cli._logging import LogFormat, LogLevel, configure_logging

app = typer.Typer(
    name="haiku-rag",
    cls=GlobalOptionsAnywhere,
    help="Search, cite and ask across your haiku databases. Documents come from haiku-ingester.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"haiku-rag version {__version__}")
        raise typer.Exit(0)


@app.callback()
def _global_options(
    ctx: typer.Context,
    version: bool = typer.Option(
        False, "--version", "-v", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    config: Path | None = typer.Option(
        None, "--config", "-c", help=(
            "Configuration file (default: $HAIKU_RAG_CONFIG_PATH, then ./haiku.rag.yaml, "
            "then haiku.rag.yaml in the data directory)."
        ),
    ),
    db_name: str | None = typer.Option(
        None,
        "--db-name",
        "--database",
        help="Work on this configured database only (remote ones included).",
    ),
    read_only: bool = typer.Option(False, "--read-only", help="Open every database read-only."),
    log_level: LogLevel = typer.Option(
        LogLevel.warning, "--log-level", help="Show library log events at this level and above, on stderr."
    ),
    log_format: LogFormat = typer.Option(
        LogFormat.console, "--log-format", help="console, or json (one object per line, as haiku-ingester's)."
    ),
    quiet: bool = typer.Option(
        False, "--quiet", "-q", help="Log errors only (--log-level error) and show no status line while waiting."
    ),
) -> None:
    configure_logging(LogLevel.error if quiet else log_level, log_format)
    if quiet:
        from haiku.core.progress import set_status_reporter

        set_status_reporter(None)
    ctx.obj = GlobalOptions(config_path=config, db_name=db_name, read_only=read_only)


for _module in (
    search_commands,
    document_commands,
    structure_commands,
    database_commands,
    doctor_commands,
    tag_commands,
    config_commands,
    analyze_commands,
):
    _module.register(app)

from haiku.rag.cli.qa_commands import register as _register_qa  # noqa: E402

_register_qa(app)

from haiku.rag.cli.inspect_commands import register as _register_inspect  # noqa: E402

_register_inspect(app)

from haiku.rag.cli.convert_commands import register as _register_convert  # noqa: E402

_register_convert(app)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    from haiku.rag.cli._hints import error_text

    typer.echo(f"Warning: {error_text(message) if isinstance(message, Warning) else message}", err=True)


def main() -> None:
    from haiku.core._lancedb import hide_pandas_from_lancedb
    from haiku.rag.cli._status import show_waits

    hide_pandas_from_lancedb()  # this process never converts to pandas
    show_waits(sys.argv[1:])
    warnings.showwarning = _show_warning
    configure_logging()  # until the options are read: a usage error logs nothing anyway
    try:
        app()
    except SystemExit as exc:  # every command ends here (--help, usage errors, exit codes)
        if exc.code is None or isinstance(exc.code, int):
            from haiku.core.process_exit import leave

            leave(exc.code or 0)  # the command has closed what it opened: no interpreter teardown
        raise
    except expected_errors() as exc:  # a safety net: commands map their own errors
        from haiku.core.masking import mask_urls
        from haiku.rag.cli._hints import error_text

        typer.echo(f"Error: {mask_urls(error_text(exc))}", err=True)
        sys.exit(1)
