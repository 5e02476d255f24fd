"""The single-database store (docs/storage.md).

    from haiku.core.store import Store, SearchType, TagInfo

``Store.open(ref, config, …)`` opens one LanceDB database and publishes its
parts (``reads``, ``structure``, ``tags``, ``indexes``, ``migrator``,
``report``…); the document writes the ingester makes sit behind
``store.writer()``, a ``StoreWriter`` that a read-only store refuses. Its hybrid search fuses with ``haiku.core.fusion``,
the module the federating client fuses several databases with.
``OwnershipLock`` is the long-lived per-database lock an ingester holds.
"""

from __future__ import annotations

from typing import Any

from haiku.core.store.locks import OwnershipLock, WriterLock
from haiku.core.store.maintenance import MaintenanceReport, VacuumReport
from haiku.core.store.migrations import (
    BASE_SCHEMA_VERSION,
    MIGRATIONS,
    Migration,
    current_schema_version,
)
from haiku.core.store.reports import StoreInfo
from haiku.core.store.schema import (
    CHUNKS,
    DOCUMENT_ITEMS,
    DOCUMENTS,
    PAGE_IMAGES,
    SETTINGS,
    TABLES,
    StoreSettings,
)
from haiku.core.store.search import SearchType
from haiku.core.store.store import Store
from haiku.core.store.tags import History, HistoryEntry, TagInfo
from haiku.core.store.writer import StoreWriter

__all__ = [
    "BASE_SCHEMA_VERSION",
    "CHUNKS",
    "DOCUMENTS",
    "DOCUMENT_ITEMS",
    "MIGRATIONS",
    "PAGE_IMAGES",
    "SETTINGS",
    "STORE_SCHEMA_VERSION",
    "TABLES",
    "History",
    "HistoryEntry",
    "MaintenanceReport",
    "Migration",
    "OwnershipLock",
    "SearchType",
    "Store",
    "StoreInfo",
    "StoreSettings",
    "StoreWriter",
    "TagInfo",
    "VacuumReport",
    "WriterLock",
    "current_schema_version",
]


def __getattr__(name: str) -> Any:
    # STORE_SCHEMA_VERSION follows the migration registry, which tests may extend.
    if name == "STORE_SCHEMA_VERSION":
        return current_schema_version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
