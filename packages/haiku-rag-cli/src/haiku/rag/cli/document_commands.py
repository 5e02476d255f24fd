"""`haiku-rag list` and `get`: one database, read-only."""

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from haiku.core.errors import AmbiguousDatabaseError
from haiku.rag.cli._common import (
    at_option,
    client_command,
    db_option,
    echo_json,
    fail,
    limited_set_scope,
    one_scope,
    set_scope,
)
from haiku.rag.cli._output import print_document, print_document_lines, print_document_summary, print_items


class ListFormat(StrEnum):
    full = "full"
    short = "short"


if TYPE_CHECKING:
    from haiku.core.models import Document, DocumentItem
    from haiku.core.scope import DatabaseScope
    from haiku.rag.client import HaikuRAG


def list_documents(
    ctx: typer.Context,
    filter: str | None = typer.Option(None, "--filter", "-f", help="SQL WHERE over document fields."),
    limit: int | None = typer.Option(None, "--limit", "-l", min=1, help="At most this many documents."),
    db: Path | None = db_option(),
    at: str | None = at_option(),
    as_json: bool = typer.Option(False, "--json", help="Print the documents as JSON."),
    form: ListFormat = typer.Option(
        ListFormat.full, "--format", help="full, or short: one line per document (id, title, uri; tab-separated)."
    ),
) -> None:
    """List the documents of every configured database (or the one selected): id, uri, title, metadata, dates.

    Over several databases each document names its database, and they alternate
    between databases (as `client.list_documents` does); --limit counts them all.
    --format short prints one line per document, grouped by database over several.
    """

    def show(documents: "list[Document]", scope: "DatabaseScope") -> None:
        if as_json:
            echo_json([d.as_json(content=False) for d in documents])
        elif not documents:
            typer.echo("No documents found.")
        elif form == ListFormat.short:
            print_document_lines(documents, [str(n) for n in scope.names] if scope.covers_multiple else None)
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
    items: bool = typer.Option(
        False, "--items", help="List the document's items (label, pages, ref, caption) instead of its text."
    ),
) -> None:
    """Print one document of one database; over several, say which of them hold the id."""

    def show(found: "tuple[Document | None, list[DocumentItem]]", _: "DatabaseScope") -> None:
        document, stored = found
        if document is None:
            raise fail(f"Document with id {doc_id} not found.")
        if items and as_json:
            echo_json([item.model_dump(mode="json") for item in stored])
        elif items:
            print_items(stored)
        elif as_json:
            echo_json(document.as_json())
        else:
            print_document(document)

    async def fetch(client: "HaikuRAG") -> "tuple[Document | None, list[DocumentItem]]":
        if client.covers_multiple:
            holders = await client.databases_holding(doc_id)
            raise AmbiguousDatabaseError.document_in("get", client.source_names, doc_id, holders)
        document = await client.get_document_by_id(doc_id)
        if document is None or not items:
            return document, []
        return document, await client.get_document_items(doc_id)

    # With --at the one database must be named first; without, a set is asked who holds the id.
    select = (lambda opts: set_scope(opts, db)) if at is None else (lambda opts: one_scope(opts, db, at=at))
    client_command(ctx, select, fetch, show)


def register(app: typer.Typer) -> None:
    app.command("list")(list_documents)
    app.command("get")(get)
