"""SQL literals for the WHERE clauses haiku builds over LanceDB tables (docs/storage.md).

Every value haiku puts into a filter (an id, a uri, a revision) goes through
``sql_string``, so a quote in it can never end the literal early.
"""

from __future__ import annotations

from collections.abc import Iterable


def sql_string(value: str) -> str:
    """A quoted SQL string literal."""
    return "'" + value.replace("'", "''") + "'"


def sql_in(column: str, values: Iterable[str]) -> str:
    """``column IN ('a', 'b')`` for the given values."""
    return f"{column} IN ({', '.join(sql_string(v) for v in values)})"
