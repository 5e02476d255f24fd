"""The root of the error tree, its three categories, hints, and how messages name databases."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Hint:
    """What the caller can do about an error: ``text`` in the library's words, ``action`` naming it.

    A front end with its own way to do it (a CLI flag, a command) keeps a table from ``action`` to
    its wording and says that instead (``worded``); ``facts`` are what the wording needs (the
    database's name, a location).
    """

    action: str
    text: str
    facts: Mapping[str, Any] = field(default_factory=dict)
    joiner: str = "; "  # between the problem and the hint


# A front end's wording of one action, from the hint's facts.
Wording = Callable[[Mapping[str, Any]], str]


def with_hint(error: BaseException, problem: str, hint: Hint) -> BaseException:
    """``error`` (built with the whole message) carrying its problem and hint apart."""
    error.problem = problem  # type: ignore[attr-defined]
    error.hint = hint  # type: ignore[attr-defined]
    return error


def hinted_message(problem: str, hint: Hint) -> str:
    return f"{problem}{hint.joiner}{hint.text}"


def worded(error: BaseException, wordings: Mapping[str, Wording]) -> str:
    """The error's message with its hint in a front end's words, when the front end has them."""
    hint = getattr(error, "hint", None)
    problem = getattr(error, "problem", None)
    if isinstance(hint, Hint) and isinstance(problem, str) and hint.action in wordings:
        return f"{problem}{hint.joiner}{wordings[hint.action](hint.facts)}"
    return str(error)


def names_list(names: Iterable[str | None]) -> str:
    """Render database names the way every message does: ``a, b``."""
    rendered = [n if n is not None else "(unnamed)" for n in names]
    return ", ".join(rendered) if rendered else "none"


def database_label(name: str | None, *, unnamed: str = "the database") -> str:
    """How every message names a database: ``database 'NAME'``; ``unnamed`` for one without a name."""
    return f"database '{name}'" if name is not None else unnamed


def skip_reason(name: str, why: str) -> str:
    """Why a search left database ``name`` out (``search.on_unavailable: skip``), naming it
    once: the reason (``database 'archive' does not exist; …``) usually names it already."""
    return why if f"'{name}'" in why else f"{database_label(name)}: {why}"


def create_hint(name: str | None, at: str | None = None) -> Hint:
    """How a missing database is made: ``create=True`` to the client or the store."""
    return Hint("create-database", "create it by opening it with create=True", {"database": name, "at": at})


def missing_problem(name: str | None, *, at: str | None = None) -> str:
    """The one wording of a database that does not exist; ``at`` only for one given by path."""
    label = database_label(name)
    return f"{label} does not exist" if at is None else f"{label} does not exist at {at}"


def missing_database(name: str | None, *, at: str | None = None) -> str:
    """The one wording for a database that does not exist, with how to create it.

    ``at``: the location, only for a database the caller gave by path (it is theirs to see).
    """
    return hinted_message(missing_problem(name, at=at), create_hint(name, at))


def missing_at_path(name: str | None, at: str) -> FileNotFoundError:
    """A database given by path that does not exist: the file system's own error, with the hint."""
    problem, hint = missing_problem(name, at=at), create_hint(name, at)
    error = FileNotFoundError(hinted_message(problem, hint))
    with_hint(error, problem, hint)
    return error


class HaikuError(Exception):
    """Base of every haiku error; its message is meant for the user as is.

    ``problem`` and ``hint`` are set on an error whose message ends in a hint (see ``Hint``).
    """

    problem: str | None = None
    hint: Hint | None = None

    @classmethod
    def hinted(cls, problem: str, hint: Hint, **state: Any) -> Any:
        """The error whose message is ``problem`` and then ``hint``, keeping both apart for front ends."""
        error = cls(hinted_message(problem, hint), **state)
        with_hint(error, problem, hint)
        return error

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only constructor arguments defeat the default exception pickling
        # (it calls the class with ``args``), so every subclass rebuilds from its state.
        return (_rebuild, (type(self), self.args, self.__dict__))


class ConfigError(HaikuError):
    """The configuration, or what is installed, cannot do what was asked (docs/configuration.md)."""


class DatabaseError(HaikuError):
    """A database cannot be used as asked: missing, unknown, ambiguous, locked, read-only, or behind."""


class QueryError(HaikuError):
    """What was asked is at fault or is not there: a query, a limit, a filter, an id, a file to convert."""


def _rebuild(cls: type[BaseException], args: tuple[Any, ...], state: dict[str, Any]) -> BaseException:
    # Without calling __init__: errors cross process boundaries in the
    # ingester's workers and the sandbox.
    error = cls.__new__(cls, *args)
    error.args = args
    error.__dict__.update(state)
    return error
