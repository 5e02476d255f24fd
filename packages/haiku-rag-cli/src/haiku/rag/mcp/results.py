"""Search results as the MCP tools return them, and an image argument decoded (docs/mcp.md)."""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING

from mcp.server.mcpserver.exceptions import ToolError

from haiku.core.errors import skip_reason

if TYPE_CHECKING:
    from haiku.rag.client import SearchResults


def results_text(results: SearchResults, *, include_collection: bool) -> str:
    """Each result as the model reads it; first a line per database left out or holding no pictures."""
    # search.on_unavailable: skip left these out; the agent must know its answer is partial.
    notes = [f"Skipped: {skip_reason(name, why)}" for name, why in results.skipped.items()]
    notes += [f"No pictures: collection {name} {why}" for name, why in getattr(results, "without_pictures", {}).items()]
    if not results:
        return "\n".join([*notes, "No results found."])
    total = len(results)
    return "\n\n".join(
        [
            *notes,
            *(
                r.format_for_agent(rank, total, include_collection=include_collection, with_boxes=True)
                for rank, r in enumerate(results, 1)
            ),
        ]
    )


def decode_image(image: str) -> bytes:
    """The bytes of a base64 image argument (a ``data:…;base64,`` URL too); a tool error otherwise."""
    text = image.strip()
    if text.startswith("data:"):
        text = text.partition(",")[2]
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise ToolError("image is not base64: pass the picture's bytes base64-encoded (or a data: URL)") from None
