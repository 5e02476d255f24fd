"""`haiku-rag list` and `get`: one database, read-only."""

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from haiku.rag.cli._common import (
    at_option,
    client_command,
    db_option,
    echo_json,
    fail,
    limited_set_scope,
    one_scope,
)
from haiku.rag.cli._output import print_document, print_document_summary

if TYPE_CHECKING:
    from haiku.core.models import Document
    from haiku.core.scope import DatabaseScope


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

    def show(documents: "list[Document]", scope: "DatabaseScope") -> None:
        if as_json:
            echo_json([d.as_json(content=False) for d in documents])
        elif not documents:
            typer.echo("No documents found.")
        else:
            for document in documents:
                print_document_summary(document, label=scope.covers_multiple)

    client_command(
        ctx,
        lambda opts: limited_set_scope(opts, db, at, limit),
        lambda client: client.list_documents(limit=limit, filter=filter),
        show,
    )


def get(
    ctx: typer.Context,
    doc_id: str = typer.Argument(..., help="The document id."),
    db: Path | None = db_option(),
    at: str | None = at_option(),
    as_json: bool = typer.Option(False, "--json", help="Print the document as JSON."),
) -> None:
    """Print one document of one database."""

    def show(document: "Document | None", _: "DatabaseScope") -> None:
        if document is None:
            raise fail(f"Document with id {doc_id} not found.")
        if as_json:
            echo_json(document.as_json())
        else:
            print_document(document)

    client_command(ctx, lambda opts: one_scope(opts, db, at=at), lambda client: client.get_document_by_id(doc_id), show)


def register(app: typer.Typer) -> None:
    app.command("list")(list_documents)
    app.command("get")(get)
