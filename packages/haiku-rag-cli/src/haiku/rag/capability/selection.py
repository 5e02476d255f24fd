"""What one question, or one tool call, may read: a selection of databases and a
document filter of ``(database, document id)`` pairs (docs/qa.md)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from haiku.core.errors import UnknownDatabaseError, names_list
from haiku.core.sql import sql_in


def combine_where(*clauses: str | None) -> str | None:
    """AND the non-empty clauses together, each parenthesised."""
    present = [c.strip() for c in clauses if c and c.strip()]
    if not present:
        return None
    if len(present) == 1:
        return present[0]
    return " AND ".join(f"({c})" for c in present)


@dataclass(frozen=True)
class DocumentFilter:
    """A set of documents, each named by the database holding it and its id.

    Over a set the search narrows to the databases the filter names, and the
    id filter applies within them; a document is admitted only as the pair it
    was named with, so a copy of it in another database stays out.
    """

    pairs: tuple[tuple[str | None, str], ...]

    def __post_init__(self) -> None:
        if not self.pairs:
            raise ValueError("a document filter names at least one document")

    @classmethod
    def parse(cls, tokens: Iterable[str], covered: Sequence[str | None]) -> DocumentFilter:
        """``NAME:ID`` tokens; a bare ``ID`` only where exactly one database is covered."""
        pairs: list[tuple[str | None, str]] = []
        named = [n for n in covered if n is not None]
        for token in tokens:
            token = token.strip().strip(",")
            if not token:
                continue
            name, sep, doc_id = token.rpartition(":")
            if not sep:
                if len(covered) != 1:
                    raise ValueError(
                        f"{token} names no database; over {names_list(named)} write NAME:ID"
                    )
                pairs.append((covered[0], token))
                continue
            if not doc_id:
                raise ValueError(f"{token} has no document id after the database name")
            if name not in named:
                raise UnknownDatabaseError.on_client([name], named)
            pairs.append((name, doc_id))
        return cls(tuple(dict.fromkeys(pairs)))

    @property
    def databases(self) -> list[str | None]:
        return list(dict.fromkeys(name for name, _ in self.pairs))

    def where(self) -> str:
        ids = dict.fromkeys(doc_id for _, doc_id in self.pairs)
        return sql_in("id", ids)

    def admits(self, source: str | None, document_id: str | None) -> bool:
        return (source, document_id) in self.pairs

    def describe(self) -> str:
        return ", ".join(f"{name}:{doc_id}" if name is not None else doc_id for name, doc_id in self.pairs)


def narrow(
    selection: Sequence[str] | None,
    covered: Sequence[str | None],
    document_filter: DocumentFilter | None,
) -> list[str] | None:
    """The databases a read goes to: the selection (None = every covered one), cut to the
    databases the document filter names. None still means all of them."""
    if document_filter is None:
        return None if selection is None else list(selection)
    base = list(covered) if selection is None else list(selection)
    wanted = set(document_filter.databases)
    narrowed = [name for name in base if name in wanted]
    if selection is None and None in wanted:
        # The legacy unnamed database has no name to select it by.
        return None
    return [n for n in narrowed if n is not None]
