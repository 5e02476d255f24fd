"""Logging: structlog, readable on a terminal, one JSON object per line elsewhere.

Every event about a database or a source carries ``database`` and ``source``
keys (bound on the logger that reports it), so a journal can be filtered by
either. Third-party stdlib logging (docling, watchdog) goes through the same
renderer, at WARNING and above.
"""

from __future__ import annotations

import logging
import sys
from typing import Literal, TextIO

import structlog

LogFormat = Literal["auto", "console", "json"]

_configured = False


def _renderer(fmt: LogFormat, stream: TextIO):
    use_console = fmt == "console" or (fmt == "auto" and stream.isatty())
    if use_console:
        return structlog.dev.ConsoleRenderer(colors=stream.isatty())
    return structlog.processors.JSONRenderer(sort_keys=False)


class CurrentStderr:
    """Whatever ``sys.stderr`` is when a line is written, not when logging was configured.

    While ``run-batch`` shows its progress bar, rich puts a proxy there that
    prints each line above the bar: a log line written through it is never
    drawn over the bar.
    """

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()

    def isatty(self) -> bool:
        return sys.stderr.isatty()


def configure_logging(fmt: LogFormat = "auto", level: str = "INFO", stream: TextIO | None = None) -> None:
    """Route structlog and stdlib logging to ``stream`` (default: stderr, as it is at each line) in one format."""
    global _configured
    out: TextIO = stream or CurrentStderr()  # type: ignore[assignment]
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        numeric = logging.INFO
    from haiku.core.masking import mask_log_event

    shared = [
        mask_log_event,
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer = _renderer(fmt, out)
    exc = [] if isinstance(renderer, structlog.dev.ConsoleRenderer) else [structlog.processors.format_exc_info]
    structlog.configure(
        processors=[*shared, structlog.processors.StackInfoRenderer(), *exc, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=out),
        cache_logger_on_first_use=False,
    )
    handler = logging.StreamHandler(out)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *exc, renderer],
            foreign_pre_chain=[*shared, structlog.stdlib.add_logger_name],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(max(numeric, logging.WARNING))
    _configured = True


def get_logger(**bound: object) -> structlog.typing.FilteringBoundLogger:
    return structlog.get_logger("haiku.ingester").bind(**bound)
