"""How results and documents read on a terminal (docs/cli.md)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from haiku.rag.qa.render import pages_line

if TYPE_CHECKING:  # pydantic models load with the client, not for `--help`
    from haiku.core.models import Document, DocumentItem, SearchResult


def shown_location(location: Path | str) -> str:
    """A database's location as a user reads it: a local path normalised
    (``examples/../demo-data`` → ``demo-data``), a URI as configured."""
    text = str(location)
    if isinstance(location, str) and "://" in location:
        return text
    return os.path.normpath(os.path.expanduser(text))


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line if line else line for line in text.strip().splitlines())


def print_results(results: Sequence[SearchResult], *, label: bool) -> None:
    """Per result: chunk id, score, title or uri; ``database: NAME`` when the search spans
    several databases; where the document came from (``uri:``), its section and pages
    when known; then the text."""
    if not results:
        typer.echo("No results found.")
        return
    for rank, result in enumerate(results, start=1):
        heading = result.document_title or result.document_uri or result.document_id or ""
        typer.echo(f"{rank}. {result.chunk_id}  score={result.score:.4f}  {heading}".rstrip())
        if label:
            typer.echo(f"database: {result.source}")
        if result.document_uri and result.document_uri != heading:
            typer.echo(f"uri: {result.document_uri}")
        if result.headings:
            typer.echo("section: " + " > ".join(result.headings))
        pages = pages_line(result.page_numbers)
        if pages is not None:
            typer.echo(pages)
        if result.picture_ref:  # an image query's match (docs/pictures.md)
            typer.echo(f"picture: {result.picture_ref}")
        typer.echo(_indent(result.content))
        typer.echo()


def result_json(result: SearchResult) -> dict[str, Any]:
    return result.model_dump(mode="json")


def print_document_summary(document: Document, *, label: bool = False) -> None:
    typer.echo(f"{document.id}")
    if label:
        typer.echo(f"  database: {document.source}")
    typer.echo(f"  uri: {document.uri or ''}")
    typer.echo(f"  title: {document.title or ''}")
    if document.metadata.get("source_id"):  # the ingester source it came from (`manual`: added by hand)
        typer.echo(f"  ingester source: {document.metadata['source_id']}")
    if document.metadata:
        typer.echo(f"  metadata: {json.dumps(document.metadata, ensure_ascii=False, sort_keys=True, default=str)}")
    typer.echo(f"  created: {document.created_at.isoformat()}  updated: {document.updated_at.isoformat()}")


def document_line(document: Document) -> str:
    """``list --format short``: id, title and uri on one line, tab-separated (``-`` for one not known)."""
    return "\t".join((document.id or "-", _one_line(document.title) or "-", document.uri or "-"))


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split())


def print_document_lines(documents: Sequence[Document], databases: Sequence[str] | None) -> None:
    """One line per document; over a set (``databases``, in configured order) grouped under a
    ``NAME:`` line per database that listed any, each line indented."""
    if databases is None:
        for document in documents:
            typer.echo(document_line(document))
        return
    for name in databases:
        group = [document for document in documents if document.source == name]
        if group:
            typer.echo(f"{name}:")
            for document in group:
                typer.echo("  " + document_line(document))


def print_document(document: Document) -> None:
    print_document_summary(document)
    typer.echo()
    typer.echo(document.content)


ITEM_TEXT = 60  # characters of an item's text shown when it has no caption


def print_items(items: Sequence[DocumentItem]) -> None:
    """One line per item: order, label, pages, ref, then its caption (or the start of its text)."""
    if not items:
        typer.echo("No items stored for this document (it was stored before the database kept structure).")
        return
    for item in items:
        pages = ",".join(str(page) for page in item.page_numbers) or "-"
        text = item.caption or " ".join(item.text.split())
        shown = text if len(text) <= ITEM_TEXT else text[: ITEM_TEXT - 1] + "…"
        picture = "[picture] " if item.has_image else ""
        typer.echo(f"{item.order:>4}  {item.label:<15} p.{pages:<6} {item.self_ref:<14} {picture}{shown}".rstrip())
