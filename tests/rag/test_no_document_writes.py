"""``haiku-rag`` never writes a document: no document or chunk write is reachable from
``HaikuRAG`` (docs/design.md, "Three packages, one namespace"; docs/storage.md, "Parts and the writer").

Two checks: every store a client opens refuses the writer, and no module of
``haiku.rag`` asks for one, names a document write or imports a writing part.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import haiku.rag
from haiku.core.errors import ReadOnlyError
from haiku.rag.client import HaikuRAG

ROOT = Path(haiku.rag.__file__).parent

# The writer's parts are reached only through ``writer``; their verbs are named too, in
# case a part ever stands elsewhere. (``load_documents`` is left out: the inspector's
# screen loads documents into a list under that name.)
WRITE_NAMES = {
    "writer", "upsert_document", "upsert_documents", "update_document_metadata",
    "delete_document", "remove_orphan_chunks", "replace_vectors", "replace_picture_vectors",
    "record_identity", "record_processing", "set_rebuild_marker",
}  # fmt: skip
WRITING_MODULES = {
    "haiku.core.store.writer", "haiku.core.store.writes", "haiku.core.store.orphans",
    "haiku.core.store.rebuild", "haiku.core.store.picture_rebuild",
}  # fmt: skip


def document_writes(source: str) -> list[str]:
    """Each use of a writing name, as an attribute (``x.writer``) or an import, with its line."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in WRITE_NAMES:
            found.append(f"{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module in WRITING_MODULES:
            found.append(f"{node.lineno}: from {node.module}")
        elif isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names if a.name in WRITING_MODULES]
    return found


def test_the_scan_finds_a_write_written_any_way():
    source = "from haiku.core.store.writer import StoreWriter\nasync def f(s):\n    await s.writer().documents.delete_document('x')\n"
    assert document_writes(source) == ["1: from haiku.core.store.writer", "3: .delete_document", "3: .writer"]


def test_no_module_of_haiku_rag_reaches_a_document_write():
    found = {
        str(path.relative_to(ROOT)): uses
        for path in sorted(ROOT.rglob("*.py"))
        if (uses := document_writes(path.read_text(encoding="utf-8")))
    }
    assert found == {}


async def test_the_store_of_a_writable_client_refuses_the_writer(two_db):
    async with HaikuRAG(config=two_db, sources=["papers"]) as client:
        assert not client.is_read_only  # writable for lifecycle work (tags, vacuum)
        with pytest.raises(ReadOnlyError, match="papers' is open for reads and lifecycle work only"):
            client.store.writer()
        (reader,) = await client.clients_for(["papers"])
        with pytest.raises(ReadOnlyError):
            reader.store.writer()
