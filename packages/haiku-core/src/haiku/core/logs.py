"""Loggers of haiku-core and the client that import structlog only when they log.

Most `haiku-rag` runs log nothing at the levels it shows, so they need not
import structlog at all (about 60 ms with the rich modules it pulls in; see
docs/cli.md, "Start-up time"). A front end says which levels it shows with
``set_minimum_level``: calls below it cost nothing. ``before_structlog``
registers the front end's structlog configuration, run once, just before the
first logger is made. A process that configures structlog itself (the
ingester) needs neither: these loggers write through whatever configuration
structlog has when they log.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "warn": logging.WARNING,
    "error": logging.ERROR,
    "exception": logging.ERROR,
    "critical": logging.CRITICAL,
}

_minimum = logging.NOTSET
_setups: list[Callable[[], None]] = []


def set_minimum_level(level: int) -> None:
    """Calls below ``level`` are dropped before structlog is imported."""
    global _minimum
    _minimum = level


def before_structlog(setup: Callable[[], None]) -> None:
    """Run ``setup`` (once) just before the first of these loggers imports structlog."""
    _setups.append(setup)


def _ignore(*args: Any, **kwargs: Any) -> None:
    return None


class LazyLogger:
    __slots__ = ("_logger", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._logger: Any = None

    def _real(self) -> Any:
        if self._logger is None:
            import structlog

            while _setups:
                _setups.pop(0)()
            self._logger = structlog.get_logger(self._name)
        return self._logger

    def __getattr__(self, method: str) -> Any:
        level = _LEVELS.get(method)
        if level is not None and level < _minimum:
            return _ignore
        return getattr(self._real(), method)


def get_logger(name: str) -> LazyLogger:
    return LazyLogger(name)
