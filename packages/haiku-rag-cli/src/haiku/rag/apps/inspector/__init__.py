"""`haiku-rag inspect`: browse what the databases hold, read-only (docs/cli.md, "inspect").

``Catalog`` reads through the public client and imports no Textual;
``InspectorApp`` (``haiku.rag.apps.inspector.app``) draws it.
"""

from haiku.rag.apps.inspector.catalog import Catalog, DatabaseEntry, PageView

__all__ = ["Catalog", "DatabaseEntry", "PageView"]
