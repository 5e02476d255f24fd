"""What `haiku-rag` says about a command it does not have (docs/cli.md#errors-and-exit-codes).

The published haiku-rag wrote documents itself (`add`, `add-src`, `delete`,
`rebuild`, `reprocess`) and listed what it converts (`formats`); here documents
are written, and files converted, by `haiku-ingester` only (`haiku-ingester add`
and `delete` for documents added by hand), so those names get
the ingester command that does the job instead of a bare "No such command". Other unknown names get close spellings, if any are close.
"""

from __future__ import annotations

from collections.abc import Sequence
from difflib import get_close_matches

WRITTEN_BY_THE_INGESTER = {
    "add": "run `haiku-ingester add - --title TITLE --db-name NAME` to add a text from standard input",
    "add-src": "run `haiku-ingester add PATH|URL --db-name NAME` to add a file or a web page",
    "delete": (
        "run `haiku-ingester delete ID --db-name NAME` to delete a document added by hand "
        "(a source's document goes when its file leaves the source folder)"
    ),
    "rebuild": "run `haiku-ingester rebuild --db-name NAME` to re-embed a database with the configured embedder",
    "reprocess": (
        "run `haiku-ingester reprocess --db-name NAME` to convert and chunk a database's documents again "
        "under the configured processing settings"
    ),
    "formats": "run `haiku-ingester formats` to list every file extension the ingester converts",
}
# Only spellings this close are suggested: "inspector" is no typo of "history".
SUGGESTION_CUTOFF = 0.75


def unknown_command_message(name: str, available: Sequence[str]) -> str:
    """The usage error for ``haiku-rag NAME`` when NAME is none of ``available``."""
    ingester_work = WRITTEN_BY_THE_INGESTER.get(name)
    if ingester_work is not None:
        return (
            f"No such command '{name}': haiku-rag only reads, documents are written by haiku-ingester; "
            f"{ingester_work}."
        )
    close = get_close_matches(name, available, n=3, cutoff=SUGGESTION_CUTOFF)
    if not close:
        return f"No such command '{name}'."
    return f"No such command '{name}'. Did you mean {', '.join(repr(c) for c in close)}?"
