"""`haiku-rag doctor`: one line per check of each selected database and the configured providers.

Over a set it checks every configured database (tagged entries at their tag),
labels each line with the database, and checks the rule searching them together
relies on: one embedder across them. The checks are ``haiku.rag.client.doctor``.
"""

from pathlib import Path

import typer

from haiku.rag.cli._common import db_option, echo_json, options, run, set_scope


def doctor(
    ctx: typer.Context,
    skip_providers: bool = typer.Option(False, "--skip-providers", help="Do not contact model endpoints."),
    db: Path | None = db_option(),
    as_json: bool = typer.Option(False, "--json", help="Print the checks as JSON."),
) -> None:
    """Check the configuration, every configured database (or the one selected) and the model providers."""
    from haiku.rag.client import doctor as run_checks

    opts = options(ctx)
    checks = run(lambda: run_checks(opts.config(), set_scope(opts, db), skip_providers=skip_providers))
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
