"""`haiku-rag ask`, `chat` and `mcp`: they cover the configured set, or the one database
--db-name or --db selects, and always open read-only (docs/cli.md).

Models and the MCP SDK load inside the commands, never at import.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from haiku.rag.cli._common import (
    GlobalOptions,
    at_option,
    check_port,
    client_command,
    db_option,
    echo_json,
    fail,
    json_option,
    query_argument,
    set_scope,
)

if TYPE_CHECKING:
    from haiku.core.scope import DatabaseScope
    from haiku.rag.capability.answer import Answer
    from haiku.rag.client import HaikuRAG


def _print_answer(question: str, answer: Answer, *, label: bool, full: bool, context: bool) -> None:
    from rich.console import Console
    from rich.markdown import Markdown

    from haiku.rag.qa.render import format_citations, grounding_line

    typer.echo(f"Question: {question}")
    typer.echo()
    console = Console()
    if console.is_terminal:
        console.print(Markdown(answer.text or "(no answer)"))
    else:
        typer.echo(answer.text or "(no answer)")
    typer.echo()
    typer.echo(format_citations(answer.citations, label=label, full=full, context=context))
    note = grounding_line(answer.note)
    if note is not None:
        typer.echo(note)


def answer_json(question: str, answer: Answer) -> dict:
    """``ask --json`` (docs/cli.md#ask-chat-analyze-mcp)."""
    return {
        "question": question,
        "answer": answer.text,
        "grounded": answer.grounded,
        "grounding": answer.grounding,
        "citations": [citation.model_dump(mode="json") for citation in answer.citations],
    }


def ask(
    ctx: typer.Context,
    question: str = query_argument("The question to answer."),
    filter: str | None = typer.Option(
        None, "--filter", "-f", help="SQL WHERE over document fields limiting what is searched."
    ),
    full_citations: bool = typer.Option(False, "--full-citations", help="Print each cited chunk in full."),
    context: bool = typer.Option(
        False, "--context", help="Also print the passage around each cited chunk that the model read."
    ),
    db: Path | None = db_option(),
    at: str | None = at_option(),
    as_json: bool = json_option("the answer and its citations"),
    require_grounded: bool = typer.Option(
        False, "--require-grounded", help="Exit 1 when the answer cites nothing (after printing it), for scripts."
    ),
) -> None:
    """Answer a question from the documents, with citations (model: qa.model)."""

    def show(answer: Answer, scope: DatabaseScope) -> None:
        if as_json:
            echo_json(answer_json(question, answer))
        else:
            _print_answer(question, answer, label=scope.covers_multiple, full=full_citations, context=context)
        if require_grounded and not answer.grounded:
            raise fail(f"--require-grounded: the answer is not grounded: {answer.note}")

    from haiku.rag.qa import ask as answer_question

    client_command(
        ctx, lambda opts: set_scope(opts, db, at), lambda client: answer_question(client, question, filter=filter), show
    )


def chat(
    ctx: typer.Context,
    model: str | None = typer.Option(None, "--model", help="Chat model name (default: qa.model.name)."),
    db: Path | None = db_option(),
    at: str | None = at_option(),
) -> None:
    """A chat app on a terminal (a line prompt when piped): /sources, /filter, /help, /quit."""

    async def converse(client: HaikuRAG) -> None:
        from haiku.rag.llm.model import ChatModel
        from haiku.rag.qa.chat import HELP, ChatSession

        configured = client.config.qa.model
        model_config = configured if model is None else configured.model_copy(update={"name": model})
        interactive = sys.stdin.isatty()
        chat_model = ChatModel(model_config)
        try:
            if interactive and sys.stdout.isatty():
                from haiku.rag.apps.chat import run_chat

                await run_chat(client, chat_model)
                return
            session = ChatSession(client, chat_model, typer.echo)
            if interactive:
                typer.echo(f"haiku-rag chat over {', '.join(map(str, client.source_names))} "
                           f"(model {model_config.name})\n{HELP}")
            while True:
                if interactive:
                    typer.echo("> ", nl=False)
                line = await asyncio.to_thread(sys.stdin.readline)
                if not line or not await session.handle(line):
                    break
        finally:
            await chat_model.aclose()

    client_command(ctx, lambda opts: set_scope(opts, db, at), converse)


def mcp(
    ctx: typer.Context,
    stdio: bool = typer.Option(False, "--stdio", help="Serve over standard input/output instead of HTTP."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind (streamable HTTP)."),
    port: int = typer.Option(8001, "--port", min=1, max=65535, help="Port to bind (streamable HTTP)."),
    db: Path | None = db_option(),
    at: str | None = at_option(),
) -> None:
    """Serve the documents to MCP clients (streamable HTTP at /mcp, or --stdio)."""

    def select(opts: GlobalOptions) -> DatabaseScope:
        from haiku.rag.mcp import exposure_warning

        scope = set_scope(opts, db, at)
        if not stdio:
            check_port(host, port)
            warning = exposure_warning(host)
            if warning is not None:
                typer.echo(f"Warning: {warning}", err=True)
        return scope

    async def serve_client(client: HaikuRAG) -> None:
        from haiku.rag.mcp import serve

        if not stdio:
            typer.echo(f"Serving MCP on http://{host}:{port}/mcp (Ctrl+C to stop)", err=True)
        await serve(client, stdio=stdio, host=host, port=port)

    try:
        client_command(ctx, select, serve_client)
    except KeyboardInterrupt:
        raise typer.Exit(0) from None


def register(app: typer.Typer) -> None:
    """Add the question-answering commands to the `haiku-rag` app."""
    app.command("ask")(ask)
    app.command("chat")(chat)
    app.command("mcp")(mcp)
