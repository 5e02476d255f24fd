"""The CLI parses, calls the client and prints (docs/design.md): it reaches no store.

An AST scan of every ``haiku.rag.cli`` module: no ``.store`` attribute (the
client's escape hatch to one database's Store) and no private attribute of
another object (``client._x``). What a command needs is a client method.
"""

from __future__ import annotations

import ast
from pathlib import Path

import haiku.rag.cli

CLI = Path(haiku.rag.cli.__file__).parent


def _reaches_past_the_client(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Attribute):
            continue
        private = node.attr.startswith("_") and not node.attr.startswith("__")
        own = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
        if node.attr == "store" or (private and not own):
            found.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
    return found


def test_no_command_reaches_a_store_or_a_private_attribute():
    files = sorted(CLI.glob("*.py"))
    assert files
    assert [hit for path in files for hit in _reaches_past_the_client(path)] == []


def test_the_scan_sees_a_store_and_a_private_attribute(tmp_path):
    sample = tmp_path / "cmd.py"
    sample.write_text("n = client.store.reads.count_chunks()\nm = client._order\nk = self._config\n")
    assert sorted(_reaches_past_the_client(sample)) == ["cmd.py:1 client.store", "cmd.py:2 client._order"]
