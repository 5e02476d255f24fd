"""haiku-ingester: one daemon that keeps every configured database in sync with its folders.

    from haiku.ingester import IngesterApp, run_batch, collect_status
    from haiku.ingester import Ingester  # add and delete documents by hand
    from haiku.ingester.rebuild import rebuild

Importing this package loads no model library; the names above load their
modules on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # type checkers see the real names; at run time they load on first use
    from haiku.ingester.app import IngesterApp
    from haiku.ingester.batch import BatchReport, run_batch
    from haiku.ingester.manual.api import Ingester
    from haiku.ingester.manual.session import AddResult
    from haiku.ingester.status import collect_status

__version__ = "0.1.0"

_LAZY = {
    "IngesterApp": "haiku.ingester.app",
    "run_batch": "haiku.ingester.batch",
    "BatchReport": "haiku.ingester.batch",
    "collect_status": "haiku.ingester.status",
    "Ingester": "haiku.ingester.manual.api",
    "AddResult": "haiku.ingester.manual.session",
}

__all__ = ["AddResult", "BatchReport", "Ingester", "IngesterApp", "__version__", "collect_status", "run_batch"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
