"""`haiku-rag visualize` and `picture`: a chunk drawn on its pages (from the database holding it),
a stored picture (one database)."""

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from haiku.rag.cli._common import (
    at_option,
    client_command,
    db_option,
    echo_json,
    json_option,
    one_scope,
    set_scope,
)

if TYPE_CHECKING:
    from PIL.Image import Image

    from haiku.core.scope import DatabaseScope
    from haiku.rag.client import HaikuRAG


def page_file(directory: Path, chunk_id: str, page: int) -> Path:
    """Where `visualize` writes the drawing of one page of a chunk."""
    return directory / f"{chunk_id}-page-{page}.png"


def visualize(
    ctx: typer.Context,
    chunk_id: str = typer.Argument(..., help="The chunk id (from `search`)."),
    output: Path = typer.Option(Path("."), "--output", "-o", help="Folder to write the PNGs in (made if missing)."),
    db: Path | None = db_option(),
    at: str | None = at_option(),
    as_json: bool = json_option("the pages and files"),
) -> None:
    """Draw a chunk's boxes on each page it touches: one PNG per page, their paths printed.

    Over several databases it draws from the one holding the chunk id.
    """

    async def draw(client: "HaikuRAG") -> "tuple[str | None, list[Image]]":
        source = None
        if client.covers_multiple:
            source = await _holder(client, chunk_id)
        return source, await client.visualize_chunk(chunk_id, source=source)

    def save(drawn: "tuple[str | None, list[Image]]", scope: "DatabaseScope") -> None:
        source, images = drawn
        output.mkdir(parents=True, exist_ok=True)
        written: list[tuple[int, Path]] = []
        for image in images:
            page = int(image.info["page"])
            path = page_file(output, chunk_id, page)
            image.save(path, format="PNG")
            written.append((page, path))
        if as_json:
            pages = [{"page": page, "path": str(path)} for page, path in written]
            echo_json({"chunk_id": chunk_id, "source": source or scope.databases[0].name, "pages": pages})
        else:
            for _, path in written:
                typer.echo(str(path))

    # With --at the one database must be named first; without, a set is asked who holds the id (as `get`).
    select = (lambda opts: set_scope(opts, db)) if at is None else (lambda opts: one_scope(opts, db, at=at))
    client_command(ctx, select, draw, save)


async def _holder(client: "HaikuRAG", chunk_id: str) -> str:
    """The one database of the client's set holding the chunk; refused when none or several do."""
    from haiku.core.errors import AmbiguousDatabaseError, NotFoundError

    holders = await client.databases_holding_chunk(chunk_id)
    if not holders:
        raise NotFoundError.chunk_in_none(chunk_id, client.source_names)
    if len(holders) > 1:
        raise AmbiguousDatabaseError.chunk_in_several("visualize", chunk_id, holders)
    return holders[0]


def picture(
    ctx: typer.Context,
    document_id: str = typer.Argument(..., help="The document id."),
    ref: str = typer.Argument(..., help="The picture's ref, as `get DOC_ID --items` lists it (#/pictures/0)."),
    output: Path = typer.Option(..., "--output", "-o", help="The PNG file to write."),
    db: Path | None = db_option(),
    at: str | None = at_option(),
) -> None:
    """Write one stored picture of a document as PNG and print its path."""

    async def fetch(client: "HaikuRAG") -> bytes:
        return await client.get_picture_bytes(document_id, ref)

    def save(png: bytes, _: "DatabaseScope") -> None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_bytes(png)
        typer.echo(str(output))

    client_command(ctx, lambda opts: one_scope(opts, db, at=at), fetch, save)


def register(app: typer.Typer) -> None:
    app.command("visualize")(visualize)
    app.command("picture")(picture)
