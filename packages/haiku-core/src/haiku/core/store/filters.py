"""Document filters: checked once, before any database opens or any model loads.

A filter is an SQL WHERE over the document fields haiku documents
(``DOCUMENT_FIELDS``). It is checked against an empty in-memory table of those
fields, so it is parsed and planned by the same engine that will run it, and
a bad one is refused naming only those fields: not another column of the
table (``content``), nor one database picked at random, since the filter is
wrong for all of them alike.
"""

from __future__ import annotations

import re
import uuid

from haiku.core.errors import InvalidFilterError
from haiku.core.store.schema import DOCUMENT_FIELDS, documents_schema

# LanceDB's wording, less what would mislead here: its own list of the table's
# fields, the query it wrapped the filter in, the engine's stage names.
_VALID_FIELDS = re.compile(r"\.?\s*Valid fields are .*$", re.S)
_PARSE_ERROR = re.compile(r"^Error parsing statement: .*\(sql parser error: (.*)\)$", re.S)
_STAGES = ("Invalid input, ", "Schema error: ", "Error during planning: ")


def filter_error(filter: str, error: BaseException) -> InvalidFilterError:
    """What LanceDB said about a filter that cannot run, without its internals."""
    detail = str(error).strip()
    for stage in _STAGES:
        detail = detail.removeprefix(stage)
    detail = _PARSE_ERROR.sub(r"cannot parse it: \1", detail)
    detail = _VALID_FIELDS.sub("", detail).rstrip(". ")
    detail = detail[:1].lower() + detail[1:]
    return InvalidFilterError.of(filter, detail, DOCUMENT_FIELDS)


async def check_document_filter(filter: str | None) -> None:
    """Raise ``InvalidFilterError`` (a ``ValueError``) when ``filter`` would fail on any database."""
    if not filter or not filter.strip():  # as the store reads it: no filter
        return
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
