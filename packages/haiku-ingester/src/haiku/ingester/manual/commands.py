"""The bodies of ``haiku-ingester add`` and ``delete`` (docs/ingester.md, "Adding documents").

The command line parses its options and calls these; they call ``Ingester``,
the Python writer, so the command and the API keep the same rules.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import BinaryIO

from haiku.core.config import AppConfig
from haiku.ingester.manual.api import Ingester
from haiku.ingester.manual.errors import AddRefusedError
from haiku.ingester.manual.session import AddResult
from haiku.ingester.manual.source import MAX_FILE_SIZE
from haiku.ingester.manual.targets import parse_metadata


async def add_documents(
    config: AppConfig,
    database: str,
    arguments: Sequence[str],
    *,
    title: str | None = None,
    meta: Sequence[str] = (),
    fmt: str = "md",
    identity: str | None = None,
    refresh: bool = False,
    wait: bool = True,
    stdin: BinaryIO | None = None,
) -> list[AddResult]:
    """One result per argument, in the order given (``-`` reads standard input once)."""
    if refresh and arguments:
        raise AddRefusedError(
            "--refresh fetches every URL already added to the database again; give no arguments"
        )
    if not refresh and not arguments:
        raise AddRefusedError("name the files, URLs or - (standard input) to add, or pass --refresh")
    if list(arguments).count("-") > 1:
        raise AddRefusedError("standard input ('-') can be added once per command")
    metadata = parse_metadata(list(meta))
    if "-" in arguments and not title:
        raise AddRefusedError(
            "a text from standard input needs --title (its identity is a slug of the title)"
        )
    async with Ingester(config, wait=wait) as ingester:
        if refresh:
            return await ingester.refresh(database=database)
        results: list[AddResult] = []
        others = [a for a in arguments if a != "-"]
        if others:
            results += await ingester.add_many(others, database=database, title=title, metadata=metadata)
        if "-" in arguments:
            data = (stdin or sys.stdin.buffer).read(MAX_FILE_SIZE + 1)
            if len(data) > MAX_FILE_SIZE:
                raise AddRefusedError(
                    f"standard input is over the size limit ({MAX_FILE_SIZE} bytes); nothing was added"
                )
            if not data.strip():
                raise AddRefusedError("standard input is empty; nothing was added")
            assert title is not None
            results += await ingester.add_text_many(
                [data], database=database, title=title, identity=identity, format=fmt, metadata=metadata
            )
        order = {argument: i for i, argument in enumerate(arguments)}
        return sorted(results, key=lambda r: order.get(r.argument, len(order)))


async def delete_documents(
    config: AppConfig, database: str, arguments: Sequence[str], *, wait: bool = True
) -> list[AddResult]:
    if not arguments:
        raise AddRefusedError("name the documents to delete (their ids or uris)")
    async with Ingester(config, wait=wait) as ingester:
        return await ingester.delete_many(arguments, database=database)


def print_results(results: list[AddResult], as_json: bool) -> int:
    """Print one line (or JSON record) per argument; the exit status: 0 only when every one was written."""
    import json

    import typer

    if as_json:
        typer.echo(json.dumps([r.as_json() for r in results], indent=2, ensure_ascii=False))
    else:
        for result in results:
            typer.echo(result_line(result), err=not result.ok)
    return 0 if all(r.ok for r in results) else 1


def result_line(result: AddResult) -> str:
    if result.outcome == "failed" or result.outcome == "skipped":
        error = result.error or "not written"
        named = error if error.startswith(result.argument) else f"{result.argument}: {error}"  # named once
        return f"{result.outcome}: {named}"
    chunks = f" ({result.chunks} chunk(s))" if result.outcome in ("added", "updated", "unchanged") else ""
    return f"{result.outcome}: {result.document_id or '-'} {result.uri}{chunks}"
