"""Documents added by hand: ``haiku-ingester add`` / ``delete``, URLs, and the Python writer ``Ingester``.

See docs/ingester.md, "Adding documents". The names below load their modules
on first use: the pipeline imports ``manual.source`` without the writer.
"""

from __future__ import annotations

from typing import Any

_LAZY = {
    "Ingester": "haiku.ingester.manual.api",
    "AddFailedError": "haiku.ingester.manual.api",
    "AddResult": "haiku.ingester.manual.session",
    "AddRefusedError": "haiku.ingester.manual.errors",
    "DeleteRefusedError": "haiku.ingester.manual.errors",
    "UrlRefusedError": "haiku.ingester.manual.errors",
    "MANUAL_SOURCE_ID": "haiku.ingester.manual.source",
}

__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
