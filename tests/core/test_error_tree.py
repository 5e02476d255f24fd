"""One error tree (docs/design.md): what the product raises on purpose is a HaikuError.

Both CLIs print ``HaikuError`` and ``OSError`` as ``Error: …`` with exit 1;
anything else is a bug and must show its traceback, so no command may catch
a bare builtin exception and hide one.
"""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

import pytest

from haiku.core.errors import HaikuError

PACKAGES = Path(__file__).resolve().parents[2] / "packages"
CLI_FILES = [
    *sorted((PACKAGES / "haiku-rag-cli" / "src" / "haiku" / "rag" / "cli").glob("*.py")),
    PACKAGES / "haiku-ingester" / "src" / "haiku" / "ingester" / "cli.py",
]
# What a command may catch by a builtin name: the file system, the user's Ctrl-C, exits.
ALLOWED = {"OSError", "FileNotFoundError", "PermissionError", "BrokenPipeError", "KeyboardInterrupt", "SystemExit"}


def _caught_builtins(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ExceptHandler) or node.type is None:
            if isinstance(node, ast.ExceptHandler):
                found.append(f"{path.name}:{node.lineno} bare except")
            continue
        names = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
        for name in names:
            if isinstance(name, ast.Name) and isinstance(getattr(builtins, name.id, None), type):
                if issubclass(getattr(builtins, name.id), BaseException) and name.id not in ALLOWED:
                    found.append(f"{path.name}:{node.lineno} catches {name.id}")
    return found


def test_no_command_catches_a_bare_builtin_exception():
    assert CLI_FILES and all(path.is_file() for path in CLI_FILES)
    assert [hit for path in CLI_FILES for hit in _caught_builtins(path)] == []


def test_the_scan_sees_a_caught_builtin(tmp_path):
    sample = tmp_path / "cli.py"
    sample.write_text("try:\n    pass\nexcept (OSError, ValueError):\n    pass\n")
    assert _caught_builtins(sample) == ["cli.py:3 catches ValueError"]


def test_both_clis_print_haiku_errors_and_os_errors_only():
    from haiku.ingester.cli import _expected_errors
    from haiku.rag.cli._common import expected_errors

    assert expected_errors() == (HaikuError, OSError)
    assert _expected_errors() == (HaikuError, OSError)


@pytest.mark.parametrize(
    "error_type",
    [
        "haiku.core.embedders:EmbeddingError",
        "haiku.rag.rerankers.base:RerankerError",
        "haiku.ingester.errors:IngesterError",
        "haiku.rag.llm.errors:QAError",
        "haiku.rag.sandbox.errors:SandboxUnavailableError",
        "haiku.core.errors:EmptyQueryError",
        "haiku.core.errors:InvalidFilterError",
    ],
)
def test_the_products_own_errors_derive_from_haiku_error(error_type):
    import importlib

    module, name = error_type.split(":")
    assert issubclass(getattr(importlib.import_module(module), name), HaikuError)


async def test_a_bad_filter_and_an_empty_query_are_haiku_errors_and_value_errors():
    from haiku.core.errors import EmptyQueryError, InvalidFilterError
    from haiku.core.store.filters import check_document_filter

    with pytest.raises(InvalidFilterError, match="document fields id, uri, title"):
        await check_document_filter("nonsense_field = 1")
    assert issubclass(InvalidFilterError, ValueError) and issubclass(EmptyQueryError, ValueError)
    with pytest.raises(EmptyQueryError, match="the query is empty"):
        EmptyQueryError.check("   ")
