"""`haiku-rag analyze`: a question answered by code the model runs in the sandbox over the
documents; it covers the configured set, or the one database --db-name or --db selects,
read-only (docs/cli.md)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from haiku.rag.cli._common import at_option, client_command, db_option, echo_json, query_argument, set_scope

if TYPE_CHECKING:
    from haiku.core.scope import DatabaseScope
    from haiku.rag.client import Analysis


def print_analysis(analysis: Analysis) -> None:
    typer.echo(f"Question: {analysis.question}")
    typer.echo()
    typer.echo(analysis.answer or "(no answer)")
    for number, program in enumerate(analysis.programs, 1):
        typer.echo()
        typer.echo(f"Program {number}:")
        typer.echo(textwrap.indent(program.code.rstrip("\n"), "    "))
        typer.echo("Output:")
        typer.echo(textwrap.indent(program.output.rstrip("\n") or "(no output)", "    "))
        if program.error:
            typer.echo("Error:")
            typer.echo(textwrap.indent(program.error.rstrip("\n"), "    "))
    if not analysis.programs:
        typer.echo()
        typer.echo("Programs: none")


def analyze(
    ctx: typer.Context,
    question: str = query_argument("The question to answer by analysing the documents."),
    as_json: bool = typer.Option(False, "--json", help="Print the answer and the programs as JSON."),
    db: Path | None = db_option(),
    at: str | None = at_option(),
) -> None:
    """Answer a question by code run in the sandbox over the documents (model: qa.model)."""

    def show(analysis: Analysis, scope: DatabaseScope) -> None:
        if as_json:
            echo_json(analysis.as_dict())
        else:
            print_analysis(analysis)

    from haiku.rag.qa import analyze as run_analysis

    client_command(
        ctx,
        lambda opts: set_scope(opts, db, at),
        lambda client: run_analysis(client, question),
        show,
    )


def register(app: typer.Typer) -> None:
    app.command("analyze")(analyze)
