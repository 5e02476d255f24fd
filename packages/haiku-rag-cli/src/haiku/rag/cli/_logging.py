"""How `haiku-rag` logs: library events on stderr, so stdout stays the command's output
(docs/cli.md#global-options).

`--log-level` (default warning) and `--log-format` (console or json, as
haiku-ingester's) apply to structlog and stdlib logging alike; `-q` is
`--log-level error`. structlog is configured only if something logs at a
level shown (haiku.core.logs), so most commands never import it.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from enum import StrEnum


class LogLevel(StrEnum):
    debug = "debug"
    info = "info"
    warning = "warning"
    error = "error"


class LogFormat(StrEnum):
    console = "console"
    json = "json"


class _JsonLines(logging.Formatter):
    """One JSON object per line, with the keys haiku-ingester's JSON log lines have."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "event": record.getMessage(),
            "level": record.levelname.lower(),
            "logger": record.name,
            "timestamp": datetime.fromtimestamp(record.created, UTC).isoformat().replace("+00:00", "Z"),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def configure_logging(level: LogLevel = LogLevel.warning, fmt: LogFormat = LogFormat.console) -> None:
    """Show library logs at ``level`` and above on stderr, in ``fmt``."""
    from haiku.core.logs import before_structlog, set_minimum_level

    numeric = logging.getLevelName(level.value.upper())
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_JsonLines() if fmt == LogFormat.json else logging.Formatter("%(levelname)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(numeric)
    set_minimum_level(numeric)
    if "structlog" in sys.modules:  # already in use (a second command in one process): configure it now
        _configure_structlog(numeric, fmt)
    else:
        before_structlog(lambda: _configure_structlog(numeric, fmt))


def _configure_structlog(level: int, fmt: LogFormat) -> None:
    import structlog

    from haiku.core.masking import mask_log_event

    if fmt == LogFormat.json:
        processors = [
            mask_log_event,
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(),
        ]
    else:
        structlog.reset_defaults()  # structlog's own readable lines, whatever an earlier command set
        processors = [mask_log_event, *structlog.get_config()["processors"]]
    structlog.configure(
        processors=processors,
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        wrapper_class=structlog.make_filtering_bound_logger(level),
    )
