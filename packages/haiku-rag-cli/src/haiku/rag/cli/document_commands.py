"""`haiku-rag list` and `get`: one database, read-only."""

from pathlib import Path

import typer

from haiku.rag.cli._common import (
    at_option,
    client_for,
    db_option,
    echo_json,
    fail,
    one_scope,
    options,
    run,
    set_scope,
)
from haiku.rag.cli._output import document_json, print_document, print_document_summary


def list_documents(
    ctx: typer.Context,
    filter: str | None = typer.Option(None, "--filter", "-f", help="SQL WHERE over document fields."),
    limit: int | None = typer.Option(None, "--limit", "-l", min=1, help="At most this many documents."),
    db: Path | None = db_option(),
    at: str | None = at_option(),
    as_json: bool = typer.Option(False, "--json", help="Print the documents as JSON."),
) -> None:
    """List the documents of every configured database (or the one selected): id, uri, title, metadata, dates.

    Over several databases each document names its database, and they alternate
    between databases (as `client.list_documents` does); --limit counts them all.
    """
    opts = options(ctx)

    async def work() -> None:
        scope = set_scope(opts, db, at)
        async with client_for(opts, scope, read_only=True) as client:
            documents = await client.list_documents(limit=limit, filter=filter)
        if as_json:
            echo_json([document_json(d, content=False) for d in documents])
        elif not documents:
            typer.echo("No documents found.")
        else:
            for document in documents:
                print_document_summary(document, label=scope.covers_multiple)

    run(work)


def get(
    ctx: typer.Context,
    doc_id: str = typer.Argument(..., help="The document id."),
    db: Path | None = db_option(),
    at: str | None = at_option(),
    as_json: bool = typer.Option(False, "--json", help="Print the document as JSON."),
) -> None:
    """Print one document of one database."""
    opts = options(ctx)

    async def work() -> None:
        scope = one_scope(opts, db, at=at)
        async with client_for(opts, scope, read_only=True) as client:
            document = await client.get_document_by_id(doc_id)
        if document is None:
            raise fail(f"Document with id {doc_id} not found.")
        if as_json:
            echo_json(document_json(document, content=True))
        else:
            print_document(document)

    run(work)


def register(app: typer.Typer) -> None:
    app.command("list")(list_documents)
    app.command("get")(get)
