"""Document filters: checked once, before any database opens or any model loads.

A filter is one SQL WHERE expression over the document fields haiku documents
(``DOCUMENT_FIELDS``). It is checked against an empty in-memory table of those
fields, so it is parsed and planned by the same engine that will run it, and
a bad one is refused naming only those fields: not another column of the
table (``content``), nor one database picked at random, since the filter is
wrong for all of them alike. A filter that plans but fails on the stored rows
(a cast of a title to a number, a division by zero) is reported as failed, with
the first line of the engine's reason and neither its source locations nor the
row's values (docs/client.md#search).
"""

from __future__ import annotations

import re
import uuid

from haiku.core.errors import InvalidFilterError
from haiku.core.store.schema import DOCUMENT_FIELDS, documents_schema

# LanceDB's wording, less what would mislead or leak here: its own list of the
# table's fields, the query it wrapped the filter in, the engine's stage names,
# the places in its own sources, and the stored values it quotes.
_VALID_FIELDS = re.compile(r"\.?\s*Valid fields are .*$", re.S)
_PARSE_ERROR = re.compile(r"^Error parsing statement: .*\(sql parser error: (.*)\)$", re.S)
_OPTIMIZING = "Error optimizing sql filter: "
_STAGE = re.compile(
    r"^(?:Invalid input,|Invalid user input:|Schema error:|Error during planning:|lance error:"
    r"|Query Execution error:|Error applying filter expression to batch:|Arrow error:"
    r"|LanceError\(\w+\):|External error:|Execution error:)\s*",
    re.I,
)
_SOURCE_PLACE = re.compile(r",?\s*[^\s,()]*\.rs:\d+:\d+")
_QUOTED_VALUE = re.compile(r"\s*'(?:[^']|'')*'")
# Where the engine says the filter ran and failed on a row, rather than that it cannot run.
_ON_ROWS = ("Query Execution error", "Error applying filter expression")


def filter_error(filter: str, error: BaseException) -> InvalidFilterError:
    """What LanceDB said about a filter that cannot run, or failed on the stored rows, without its internals."""
    text = str(error).strip()
    if any(marker in text for marker in _ON_ROWS):
        return InvalidFilterError.failed(filter, _QUOTED_VALUE.sub("", _reason(filter, text)))
    return InvalidFilterError.of(filter, _reason(filter, text), DOCUMENT_FIELDS)


def _reason(filter: str, text: str) -> str:
    """The first line of the engine's reason, less its stage names, source places and echo of the filter."""
    detail = _SOURCE_PLACE.sub("", _PARSE_ERROR.sub(r"cannot parse it: \1", _unstaged(text)))
    if detail.startswith(_OPTIMIZING):  # "…: <the filter> (<why>)"
        detail = detail.removeprefix(_OPTIMIZING).removeprefix(filter).strip()
        detail = _unstaged(detail.removeprefix("(").removesuffix(")"))
    detail = _VALID_FIELDS.sub("", detail.splitlines()[0] if detail else "").rstrip(". ")
    return detail[:1].lower() + detail[1:] if detail else "the database engine gave no reason"


def _unstaged(detail: str) -> str:
    while (stripped := _STAGE.sub("", detail, count=1)) != detail:
        detail = stripped
    return detail


def check_single_expression(filter: str | None) -> None:
    """Refuse a filter holding more than one statement: the engine would run the first, ignoring the rest."""
    if filter and _statement_end(filter) is not None:
        raise InvalidFilterError.of(
            filter, "text after ';' would be ignored: a filter is one expression, not statements", DOCUMENT_FIELDS
        )


def _statement_end(filter: str) -> int | None:
    """Where a ``;`` outside quotes ends the first statement (``'…'`` strings, ``"…"`` and ``` `…` ``` names)."""
    quote: str | None = None
    for at, char in enumerate(filter):
        if quote is not None:
            if char == quote:  # a doubled quote reopens at once on the next character
                quote = None
        elif char in "'\"`":
            quote = char
        elif char == ";":
            return at
    return None


async def check_document_filter(filter: str | None) -> None:
    """Raise ``InvalidFilterError`` (a ``ValueError``) when ``filter`` would fail on any database."""
    if not filter or not filter.strip():  # as the store reads it: no filter
        return
    check_single_expression(filter)
    import pyarrow as pa

    from haiku.core._lancedb import import_lancedb

    lancedb = import_lancedb()
    schema = pa.schema([field for field in documents_schema() if field.name in DOCUMENT_FIELDS])
    db = await lancedb.connect_async(f"memory://haiku-filter-{uuid.uuid4().hex}")
    try:
        table = await db.create_table("documents", schema=schema)
        try:
            await table.query().where(filter).select(["id"]).limit(1).to_arrow()
        except Exception as exc:  # whatever the SQL engine rejects
            raise filter_error(filter, exc) from None
    finally:
        db.close()
