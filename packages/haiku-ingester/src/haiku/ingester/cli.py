"""The ``haiku-ingester`` command line (docs/ingester.md).

A thin shell over ``haiku.ingester``: each command calls the function of the
same name. Importing this module loads no model library (torch,
sentence-transformers, docling); those load when a command needs them.
Expected errors print ``Error: <message>`` on stderr and exit 1; usage errors exit 2.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from collections.abc import Callable, Coroutine
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from haiku.core.errors import database_label
from haiku.ingester import __version__

T = TypeVar("T")

app = typer.Typer(
    name="haiku-ingester",
    help="Keep every database in ingester.databases in sync with its folders.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class LogFormat(StrEnum):
    console = "console"
    json = "json"


class _State:
    config_path: Path | None = None
    log_format: str = "auto"
    quiet: bool = False

    def progress(self) -> bool | None:
        """Whether a command shows its progress bar: never with -q, else when stderr is a terminal."""
        return False if self.quiet else None


state = _State()


def _expected_errors() -> tuple[type[BaseException], ...]:
    """Errors a user can act on (the product's own, and the file system's): ``Error: …``, exit 1.

    Anything else is a bug and shows its traceback (docs/design.md).
    """
    from haiku.core.errors import HaikuError

    return (HaikuError, OSError)


def fail(message: str) -> typer.Exit:
    from haiku.core.masking import mask_urls

    typer.echo(f"Error: {mask_urls(message)}", err=True)
    return typer.Exit(1)


def guarded(work: Callable[[], T]) -> T:
    """Run a command body; expected errors become ``Error: …`` and exit 1."""
    try:
        return work()
    except _expected_errors() as exc:
        from haiku.ingester.cli_hints import error_text

        raise fail(error_text(exc)) from None


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine without waiting, at the end, for threads still encoding (see main)."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(coro)
    finally:
        try:
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()


def load() -> Any:
    from haiku.core.config import load_config

    return load_config(state.config_path)


def _version(value: bool) -> None:
    # Eager, so `haiku-ingester --version` alone answers instead of asking for a command.
    if value:
        typer.echo(f"haiku-ingester version {__version__}")
        raise typer.Exit(0)


@app.callback()
def main_options(
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="Configuration file (default: the usual lookup).")
    ] = None,
    log_format: Annotated[
        LogFormat | None,
        typer.Option("--log-format", help="console, or json (one object per line). Default: console on a terminal."),
    ] = None,
    log_level: Annotated[str, typer.Option("--log-level", help="debug, info, warning or error.")] = "info",
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Log errors only (--log-level error) and show no progress bar.")
    ] = False,
    version: Annotated[
        bool, typer.Option("--version", "-v", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    from haiku.ingester.logs import configure_logging

    state.config_path = config
    state.log_format = log_format.value if log_format is not None else "auto"
    state.quiet = quiet
    configure_logging(state.log_format, "error" if quiet else log_level)  # type: ignore[arg-type]


@app.command()
def serve() -> None:
    """Watch and sweep every ingested database's sources until SIGTERM (systemd Type=notify)."""
    from haiku.ingester.daemon import Daemon

    def work() -> int:
        config = load()
        path = state.config_path or config.config_path
        return run_async(Daemon(config, Path(path) if path else None).run())

    raise typer.Exit(guarded(work))


@app.command("run-batch")
def run_batch_command(
    db_name: Annotated[str | None, typer.Option("--db-name", help="Run only this database.")] = None,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Print what would be added, updated and deleted per database; write nothing."),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON (docs/cli.md).")] = False,
    engine: Annotated[
        str | None, typer.Option("--engine", help="local or ray, for this run (default: ingester.engine.type).")
    ] = None,
    address: Annotated[
        str | None, typer.Option("--address", help="The Ray cluster for this run: auto, HOST:PORT or ray://HOST:10001.")
    ] = None,
    metrics_file: Annotated[
        Path | None,
        typer.Option(
            "--metrics-file",
            help="At the end, write the run's Prometheus metrics to this file (node-exporter textfile format).",
        ),
    ] = None,
) -> None:
    """Sweep every source once, ingest what changed, and exit (1 if a file died in this run or a sweep failed).

    A file already dead before the run, unchanged since, is retried and reported
    (`still dead`) but does not fail the run.
    """
    if dry_run:
        from haiku.ingester.dryrun import plan_batch

        report = guarded(lambda: run_async(plan_batch(load(), db_name)))
    else:
        from haiku.ingester.batch import run_batch
        from haiku.ingester.pipeline.engine import engine_for_run

        def batch() -> Any:
            config = engine_for_run(load(), engine, address)
            return run_async(run_batch(config, db_name, progress=state.progress(), metrics_file=metrics_file))

        report = guarded(batch)
    if as_json:
        typer.echo(json.dumps(report.as_json(), indent=2))
    else:
        for failure in report.sweep_failures:
            typer.echo(f"Error: sweep failed: {failure}", err=True)
        for database in report.databases.values():
            for file in database.files:
                typer.echo(file.line(), err=not dry_run)
            for line in database.skip_lines():
                typer.echo(line, err=not dry_run)
        typer.echo(report.summary())
    if report.interrupted:
        typer.echo("run-batch was interrupted; the unfinished jobs stay queued", err=True)
    raise typer.Exit(0 if report.ok else 1)


@app.command()
def retry(
    job_ids: Annotated[list[int] | None, typer.Argument(help="Dead jobs to queue again (ids from `status --dead`).")] = None,
    db_name: Annotated[str | None, typer.Option("--db-name", help="Only this database's dead jobs.")] = None,
    all_dead: Annotated[bool, typer.Option("--all", help="Every dead file (of --db-name, else of every database).")] = False,
) -> None:
    """Queue dead files again: a running serve picks them up at once, else the next run-batch does."""
    from haiku.ingester.requeue import retry_dead

    report = guarded(lambda: retry_dead(load(), db_name, job_ids or [], all_dead=all_dead))
    for dead in report.queued:
        typer.echo(f"queued again: job {dead.job_id}: {database_label(dead.database)}, source {dead.source_id}: {dead.path}")
    typer.echo(report.summary())


@app.command()
def status(
    db_name: Annotated[str | None, typer.Option("--db-name", help="Report only this database.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    dead: Annotated[
        bool, typer.Option("--dead", help="List only the dead files: job id, database, source, path, reason.")
    ] = False,
) -> None:
    """Queued, claimed and dead jobs per database and source, from the queue alone."""
    from haiku.ingester.status import collect_status, dead_report, render_dead, render_status

    report = guarded(lambda: collect_status(load(), db_name))
    if dead:
        files = dead_report(report)
        typer.echo(json.dumps({"dead": files}, indent=2) if as_json else render_dead(files))
        return
    typer.echo(json.dumps(report, indent=2) if as_json else render_status(report))


@app.command()
def rebuild(
    db_name: Annotated[str, typer.Option("--db-name", help="The database to re-embed.")],
    reprocess: Annotated[
        bool, typer.Option("--reprocess", help="Then convert and chunk every document again (as `reprocess`).")
    ] = False,
) -> None:
    """Re-embed every chunk of one database with the configured embedder, then record it."""
    from haiku.ingester.rebuild import rebuild as run_rebuild

    report = guarded(lambda: run_async(run_rebuild(load(), db_name)))
    if report.unchanged:
        typer.echo(
            f"Database '{report.database}' already holds vectors of {report.identity.describe()}: "
            "0 chunk(s) re-embedded"
        )
    else:
        typer.echo(
            f"Rebuilt {database_label(report.database)}: {report.chunks} chunk(s) re-embedded with "
            f"{report.identity.describe()}"
        )
    if reprocess:
        reprocess_command(db_name)


@app.command("reprocess")
def reprocess_command(
    db_name: Annotated[str | None, typer.Option("--db-name", help="The database to re-process.")] = None,
    all_databases: Annotated[
        bool, typer.Option("--all", help="Re-process every ingested database in one run (the model loads once).")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON (docs/ingester.md).")] = False,
) -> None:
    """Convert and chunk every document of one database (or all of them) again under the configured
    processing settings.

    Vectors of unchanged chunk texts are kept; the settings are recorded when every document is done.
    A document whose source file is gone is kept and reported. Rerunning resumes a run cut short.
    """
    from haiku.ingester.reprocess import ReprocessRefusedError, reprocess, reprocess_all

    def run() -> list:
        if all_databases and db_name is not None:
            raise ReprocessRefusedError("--all re-processes every database; leave out --db-name, or --all")
        if all_databases:
            return run_async(reprocess_all(load(), progress=state.progress()))
        return [run_async(reprocess(load(), db_name, progress=state.progress()))]

    reports = guarded(run)
    if as_json:
        payload = [r.as_json() for r in reports]
        typer.echo(json.dumps({"databases": payload} if all_databases else payload[0], indent=2))
    else:
        for report in reports:
            for line in report.lines():
                typer.echo(line, err=True)
            typer.echo(report.summary())
    raise typer.Exit(0 if all(report.ok for report in reports) else 1)


@app.command("add")
def add_command(
    targets: Annotated[
        list[str] | None, typer.Argument(help="Files, http(s):// URLs, or - (standard input).")
    ] = None,
    db_name: Annotated[str, typer.Option("--db-name", help="The database to add to.")] = ...,  # type: ignore[assignment]
    title: Annotated[str | None, typer.Option("--title", help="The title (needed for -).")] = None,
    meta: Annotated[list[str] | None, typer.Option("--meta", help="KEY=VALUE metadata (repeatable).")] = None,
    fmt: Annotated[str, typer.Option("--format", help="What - holds: md, txt or html.")] = "md",
    identity: Annotated[str | None, typer.Option("--identity", help="-'s key in text://NAME/KEY.")] = None,
    refresh: Annotated[
        bool, typer.Option("--refresh", help="Fetch every URL added again, conditionally.")
    ] = False,
    no_wait: Annotated[
        bool, typer.Option("--no-wait", help="Beside a running serve: return once queued.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON record per argument.")] = False,
) -> None:
    """Add files, web pages or a text to a database by hand; the same path again updates it (docs/ingester.md)."""
    from haiku.ingester.manual.commands import add_documents, print_results

    results = guarded(lambda: run_async(add_documents(
        load(), db_name, targets or [], title=title, meta=meta or [], fmt=fmt, identity=identity, refresh=refresh,
        wait=not no_wait,
    )))  # fmt: skip
    raise typer.Exit(print_results(results, as_json))


@app.command("delete")
def delete_command(
    targets: Annotated[
        list[str], typer.Argument(help="Document ids or uris (or the paths they were added from).")
    ],
    db_name: Annotated[str, typer.Option("--db-name", help="The database to delete from.")],
    no_wait: Annotated[
        bool, typer.Option("--no-wait", help="Beside a running serve: return once queued.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON record per argument.")] = False,
) -> None:
    """Delete documents added by hand (alias rm); a source's documents are refused, naming the source."""
    from haiku.ingester.manual.commands import delete_documents, print_results

    results = guarded(lambda: run_async(delete_documents(load(), db_name, targets, wait=not no_wait)))
    raise typer.Exit(print_results(results, as_json))


app.command("rm", hidden=True)(delete_command)


@app.command("formats")
def formats_command(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """Every file extension the ingester converts: extension, converter, content type."""
    from haiku.core.convert.formats import format_rows, render_formats

    typer.echo(json.dumps(format_rows(), indent=2) if as_json else render_formats())


@app.command("convert")
def convert_command(
    file: Annotated[Path, typer.Argument(help="The file to convert.")],
    chunks: Annotated[bool, typer.Option("--chunks", help="Also print each chunk.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Print the title, markdown and (--chunks) chunks this file would be stored as; writes nothing."""
    from haiku.core.convert.files import FileConverter, conversion_report, render_conversion

    report = guarded(lambda: conversion_report(FileConverter(load()), file, chunks=chunks))
    typer.echo(json.dumps(report, indent=2, ensure_ascii=False) if as_json else render_conversion(report))


def _busy_threads() -> bool:
    return any(t is not threading.main_thread() and t.is_alive() and not t.daemon for t in threading.enumerate())


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        typer.echo("Interrupted", err=True)
        sys.stdout.flush()
        os._exit(130)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if _busy_threads():
            # An encode still running in a worker thread after shutdown_grace_s: its
            # job was released to the queue already, so leave without waiting for it.
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        raise


if __name__ == "__main__":
    main()
