"""What `haiku-rag search --image` checks before anything opens (docs/pictures.md, "Image queries")."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from haiku.rag.cli._common import GlobalOptions


def check_query_or_image(ctx: typer.Context, query: str | None, image: Path | None, filter: str | None) -> None:
    """Exactly one of a text query and ``--image``; ``--filter`` goes with a text query only (usage errors)."""
    if query is None and image is None:
        raise typer.BadParameter("give a query, or --image FILE to search with a picture", ctx=ctx)
    if query is not None and image is not None:
        raise typer.BadParameter("give a query or --image FILE, not both", ctx=ctx)
    if image is not None and filter is not None:
        raise typer.BadParameter("--filter applies to a text query, not to --image", ctx=ctx)


def refuse_text_only(opts: GlobalOptions) -> None:
    """Exit 1 with one line when the configured embedder cannot embed an image."""
    from haiku.core.embedders.identity import EmbedderIdentity
    from haiku.core.errors import HaikuError, ImageQueryError
    from haiku.rag.cli._common import fail
    from haiku.rag.cli._hints import error_text

    try:
        identity = EmbedderIdentity.from_config(opts.config().embeddings.model)
    except HaikuError as exc:  # the configuration itself: reported as every command reports it
        raise fail(error_text(exc)) from None
    if not identity.multimodal:
        raise fail(str(ImageQueryError.text_only(identity.describe())))
