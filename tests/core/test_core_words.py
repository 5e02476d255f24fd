"""haiku.core speaks the library's words: no message tells a caller to run a command or pass a flag.

A Python caller of ``haiku.core`` has no ``haiku-rag init`` to run and no
``--db-name`` to pass; a hint says what to do in the library's terms and each
command line words it as its own flags and commands (``haiku.core.errors.Hint``; the
errors module's docstring draws how). The scan reads every string constant of every
``haiku.core`` module with ``ast`` (parts of f-strings included), leaving out
docstrings, which speak to developers and may name the commands that use the
code. Comments are not in the tree at all.
"""

from __future__ import annotations

import ast
import itertools
import re
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "packages" / "haiku-core" / "src"

# A flag, a command line of either CLI (a product name then a word: ``haiku-rag init``),
# a command in backticks, or a service manager's command.
COMMAND_WORDS = re.compile(
    r"(?<![\w-])--[a-z]"
    r"|\bhaiku-(?:rag|ingester)\s+[a-z]"
    r"|`haiku-(?:rag|ingester)"
    r"|\bsystemctl\b"
)

# Strings that are not messages: (module path under src, the string). Keep it short, each with why.
NOT_MESSAGES = {
    # LibreOffice's own command line, which the legacy converter runs.
    ("haiku/core/convert/legacy.py", "--headless"),
    ("haiku/core/convert/legacy.py", "--convert-to"),
    ("haiku/core/convert/legacy.py", "--outdir"),
}


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes: a module's, class's or function's first statement,
    and an attribute's string just after its assignment."""
    found: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        statements = [s for s in body if isinstance(s, ast.stmt)]
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and statements:
            first = statements[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
        for before, after in itertools.pairwise(statements):
            if (
                isinstance(before, ast.Assign | ast.AnnAssign)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
            ):
                found.add(id(after.value))
    return found


def command_words(source: str, module: str) -> list[str]:
    """``module:line: 'text'`` for each message string of ``source`` that names a command or flag."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    return [
        f"{module}:{node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and (module, node.value) not in NOT_MESSAGES
        and COMMAND_WORDS.search(node.value)
    ]


def test_the_scan_finds_a_hint_that_names_a_command_or_a_flag_and_leaves_docstrings_alone():
    source = '''
"""Module docstring: `haiku-rag init` creates it."""
def missing(name):
    """Run ``haiku-rag --db-name NAME init``."""
    raise LookupError(f"database {name} does not exist; create it with `haiku-rag init`")
def ambiguous():
    return "pass --db-name NAME"
def restart():
    return "(systemctl restart haiku-ingester)"
def owned():
    return "owned by a running haiku-ingester (its lock .haiku-ingester.lock is held)"
'''
    found = command_words(source, "example.py")
    assert sorted(int(line.split(":")[1]) for line in found) == [5, 7, 9], found


def test_no_core_message_tells_a_caller_to_run_a_command_or_pass_a_flag():
    modules = sorted(CORE.rglob("*.py"))
    assert len(modules) > 100  # the whole of haiku.core was read
    found = [
        hit
        for path in modules
        for hit in command_words(path.read_text(encoding="utf-8"), path.relative_to(CORE).as_posix())
    ]
    assert not found, "\n".join(found)
