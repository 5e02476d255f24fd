"""haiku-ingester: one daemon that keeps every configured database in sync with its folders."""

__version__ = "0.1.0"
