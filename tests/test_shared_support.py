"""The helpers every package's tests share live once, in tests/support.py."""

from __future__ import annotations

import ast
from pathlib import Path

SHARED = {"cli_env", "write_config", "copy_database", "copy_tree"}


def test_no_test_package_keeps_its_own_copy_of_a_shared_helper():
    tests = Path(__file__).resolve().parent
    copies = [
        f"{path.relative_to(tests)}:{node.lineno} {node.name}"
        for path in tests.rglob("*.py")
        if path.name != "support.py"
        for node in ast.parse(path.read_text(encoding="utf-8")).body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in SHARED
    ]
    assert copies == []
