"""What `haiku-rag` says to do about an error: core's hints in this CLI's flags and commands.

Core words an error's hint for a Python caller (``create=True``, ``database_name``);
this table says the same thing as the command line a user types instead
(``haiku.core.errors.Hint``). An action missing here keeps core's words.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from haiku.core.errors import Wording, worded


def _create(facts: Mapping[str, Any]) -> str:
    name, at = facts.get("database"), facts.get("at")
    if at is None:
        return f"create it with `haiku-rag --db-name {name} init`"
    return (
        f"create it with `haiku-rag init --db {at}`"
        if name is not None
        else "create it with `haiku-rag init`"
    )


def _db_name(facts: Mapping[str, Any]) -> str:
    return str(facts.get("database") or "NAME")


HINTS: dict[str, Wording] = {
    "create-database": _create,
    "check-database": lambda facts: "`haiku-rag doctor` checks it",
    "write-configuration": lambda facts: (
        "write a configuration naming your databases (`haiku-rag init-config`), or let haiku-ingester create this one"
    ),
    "name-one-database": lambda facts: "pass --db-name NAME, or --db PATH",
    "read-from": lambda facts: f"rerun with --db-name {facts['database']}",
    "read-from-one": lambda facts: "rerun with --db-name and one of them",
    "stop-ingester-or-force": lambda facts: (
        "stop the ingester first (systemctl stop haiku-ingester), or pass --force to run anyway "
        "(the ingester does not see the change until it restarts)"
    ),
    "reprocess": lambda facts: (
        f"(with it on, `haiku-ingester reprocess --db-name {_db_name(facts)}` stores them)"
    ),
    "list-formats": lambda facts: "`haiku-ingester formats` lists the supported ones",
    "find-boxes": lambda facts: "(its boxes are in `search --json` and `get --items`)",
    "rebuild": lambda facts: (
        f"re-embed it with `haiku-ingester rebuild --db-name {_db_name(facts)}` or configure the recorded embedder"
    ),
    "migrate": lambda facts: "Run 'haiku-rag migrate' to upgrade.",
}


def error_text(error: BaseException) -> str:
    """The message `haiku-rag` prints for ``error``, its hint in this CLI's words."""
    return worded(error, HINTS)
