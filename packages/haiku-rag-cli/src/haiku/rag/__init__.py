"""haiku-rag: the federating client and the query CLI."""

__version__ = "0.1.0"
