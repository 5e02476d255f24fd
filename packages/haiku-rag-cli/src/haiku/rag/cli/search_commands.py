"""`haiku-rag search`: the configured set, or the one database selected."""

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from haiku.core.errors import database_label, skip_reason
from haiku.core.models import SearchType
from haiku.rag.cli._common import (
    at_option,
    client_command,
    db_option,
    echo_json,
    limited_set_scope,
    optional_query_argument,
    options,
)
from haiku.rag.cli._image_query import check_query_or_image, refuse_text_only
from haiku.rag.cli._output import print_results, result_json

if TYPE_CHECKING:
    from haiku.core.scope import DatabaseScope
    from haiku.rag.client import HaikuRAG, SearchResults


def search(
    ctx: typer.Context,
    query: str | None = optional_query_argument("What to search for (leave out with --image)."),
    limit: int | None = typer.Option(None, "--limit", "-l", min=1, help="Results to return (default: search.limit)."),
    filter: str | None = typer.Option(None, "--filter", "-f", help="SQL WHERE over document fields (id, uri, title, metadata, created_at, updated_at)."),
    search_type: SearchType = typer.Option("hybrid", "--search-type", "-s", help="How to retrieve."),
    db: Path | None = db_option(),
    at: str | None = at_option(),
    as_json: bool = typer.Option(False, "--json", help="Print the results as JSON."),
    image: Path | None = typer.Option(
        None, "--image", help="Search the stored pictures with this image file (needs a multimodal embedder; docs/pictures.md).",
        dir_okay=False, show_default=False,
    ),
) -> None:
    """Search every configured database (or the one --db-name selects) and fuse the results."""
    check_query_or_image(ctx, query, image, filter)
    if image is not None:
        refuse_text_only(options(ctx))

    async def call(client: "HaikuRAG") -> "SearchResults":
        if image is not None:
            return await client.search_by_image(image, limit=limit)
        assert query is not None
        return await client.search(query, limit=limit, search_type=search_type, filter=filter)

    def show(results: "SearchResults", scope: "DatabaseScope") -> None:
        skip_mode = options(ctx).config().search.on_unavailable == "skip"
        for name, why in results.skipped.items():
            typer.echo(f"Warning: skipped: {skip_reason(name, why)}", err=True)
        for name, why in getattr(results, "without_pictures", {}).items():
            typer.echo(f"Warning: {database_label(name)} {why}", err=True)
        if as_json and skip_mode:  # the shape that can say what was skipped (docs/cli.md)
            skipped = [{"database": name, "error": why} for name, why in results.skipped.items()]
            echo_json({"results": [result_json(r) for r in results], "skipped": skipped})
        elif as_json:
            echo_json([result_json(r) for r in results])
        else:
            print_results(results, label=scope.covers_multiple)

    client_command(ctx, lambda opts: limited_set_scope(opts, db, at, limit), call, show)


def register(app: typer.Typer) -> None:
    app.command("search")(search)
