"""The `ask`, `chat` and `mcp` commands (filled in by the questions/MCP work)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add the question-answering commands to the `haiku-rag` app."""
