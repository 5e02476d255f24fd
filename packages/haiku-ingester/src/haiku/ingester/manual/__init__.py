"""Documents added by hand: ``haiku-ingester add`` / ``delete``, URLs, and the Python writer ``Ingester``.

See docs/ingester.md, "Adding documents". The names below load their modules
on first use: the pipeline imports ``manual.source`` without the writer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # type checkers see the real names; at run time they load on first use
    from haiku.ingester.manual.api import AddFailedError, Ingester
    from haiku.ingester.manual.errors import AddRefusedError, DeleteRefusedError, UrlRefusedError
    from haiku.ingester.manual.session import AddResult
    from haiku.ingester.manual.source import MANUAL_SOURCE_ID

_LAZY = {
    "Ingester": "haiku.ingester.manual.api",
    "AddFailedError": "haiku.ingester.manual.api",
    "AddResult": "haiku.ingester.manual.session",
    "AddRefusedError": "haiku.ingester.manual.errors",
    "DeleteRefusedError": "haiku.ingester.manual.errors",
    "UrlRefusedError": "haiku.ingester.manual.errors",
    "MANUAL_SOURCE_ID": "haiku.ingester.manual.source",
}

__all__ = [
    "MANUAL_SOURCE_ID",
    "AddFailedError",
    "AddRefusedError",
    "AddResult",
    "DeleteRefusedError",
    "Ingester",
    "UrlRefusedError",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
