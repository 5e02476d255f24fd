"""``haiku-rag convert FILE``: what a file becomes before it is ingested (docs/cli.md, "convert").

The converter comes with the ``haiku-core[convert]`` extra (haiku-ingester
installs it); without it the command says so in one line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from haiku.rag.cli._common import echo_json, expected_errors, fail, options
from haiku.rag.cli._hints import error_text


def register(app: typer.Typer) -> None:
    @app.command("convert")
    def convert(
        ctx: typer.Context,
        file: Annotated[Path, typer.Argument(help="The file to convert.")],
        chunks: Annotated[bool, typer.Option("--chunks", help="Also print each chunk.")] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    ) -> None:
        """Print the title, markdown and (--chunks) chunks the ingester would store for FILE; writes nothing."""
        from haiku.core.convert.files import FileConverter, conversion_report, render_conversion

        try:
            report = conversion_report(FileConverter(options(ctx).config()), file, chunks=chunks)
        except expected_errors() as exc:
            raise fail(error_text(exc)) from None
        if as_json:
            echo_json(report)
        else:
            typer.echo(render_conversion(report))
