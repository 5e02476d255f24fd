"""The federating client (docs/client.md): ``HaikuRAG`` and the scope it covers.

    from haiku.rag.client import HaikuRAG, DatabaseScope, SearchType
"""

from haiku.core.models import SearchType
from haiku.core.scope import DatabaseRef, DatabaseScope
from haiku.core.store import History
from haiku.rag.client._analysis import Analysis, Program
from haiku.rag.client._client import HaikuRAG
from haiku.rag.client._database import Database
from haiku.rag.client._diagnostics import Check, DatabaseInfo, doctor, reprocess_command
from haiku.rag.client._example_config import example_config, write_example_config
from haiku.rag.client._search import SearchResults

__all__ = [
    "Analysis",
    "Check",
    "Database",
    "DatabaseInfo",
    "DatabaseRef",
    "DatabaseScope",
    "HaikuRAG",
    "History",
    "Program",
    "SearchResults",
    "SearchType",
    "doctor",
    "example_config",
    "reprocess_command",
    "write_example_config",
]
