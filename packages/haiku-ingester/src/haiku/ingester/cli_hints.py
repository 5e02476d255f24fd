"""What `haiku-ingester` says to do about an error: core's hints in this CLI's commands.

Core words an error's hint for a Python caller; this table says the same thing
as the command a user types instead (``haiku.core.errors.Hint``). An action
missing here keeps core's words.
"""

from __future__ import annotations

from haiku.core.errors import Wording, worded


def reprocess_hint(name: str | None) -> str:
    """How a user re-processes database ``name`` (``processing_identity``'s ``reprocess``)."""
    return f"`haiku-ingester reprocess --db-name {name or 'NAME'}`"


# How a user restarts the running ingester, so that it takes changed processing settings.
RESTART_COMMAND = "systemctl restart haiku-ingester"


HINTS: dict[str, Wording] = {
    "create-database": lambda facts: f"create it with `haiku-rag --db-name {facts.get('database')} init`",
    "rebuild": lambda facts: (
        f"re-embed it with `haiku-ingester rebuild --db-name {facts.get('database') or 'NAME'}` "
        "or configure the recorded embedder"
    ),
    "migrate": lambda facts: "Run 'haiku-rag migrate' to upgrade.",
    "list-formats": lambda facts: "`haiku-ingester formats` lists the supported ones",
    "reprocess": lambda facts: (
        f"(with it on, `haiku-ingester reprocess --db-name {facts.get('database') or 'NAME'}` stores them)"
    ),
}


def error_text(error: BaseException) -> str:
    """The message `haiku-ingester` prints for ``error``, its hint in this CLI's words."""
    return worded(error, HINTS)
