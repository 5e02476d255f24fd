"""No module reaches into another object's private members (docs/design.md, "Rules of the house").

The scan parses every module under packages/ with ``ast`` and reports each
``obj._name`` where ``obj`` is not ``self``, ``cls`` or ``super()`` and not a
name the same module defines at its top level (its own classes, functions and
constants). Dunder names are not private. An object's private members are its
own business: another module, or another object of the same module, asks it
through its public names instead.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

PACKAGES = Path(__file__).resolve().parents[1] / "packages"

# Public names of the standard library that begin with an underscore.
STDLIB_PUBLIC = {
    ("os", "_exit"),  # exit without cleanup: what a forked child or a fatal signal needs
}
NAMEDTUPLE_METHODS = {"_replace", "_asdict", "_fields", "_make"}  # public API of every namedtuple

# Reaches allowed by exception: (module, the expression as written). Keep it empty.
ALLOWED: set[tuple[str, str]] = set()


@dataclass(frozen=True)
class Reach:
    module: str
    line: int
    expression: str

    def __str__(self) -> str:
        return f"{self.module}:{self.line}: {self.expression}"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGES).with_suffix("").parts[2:])  # past "<distribution>/src"
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _own_names(tree: ast.Module) -> set[str]:
    """What the module itself defines at its top level (imports are other modules' names)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _allowed_owner(value: ast.expr, own: set[str]) -> bool:
    if isinstance(value, ast.Name):
        return value.id in ("self", "cls") or value.id in own
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "super"


def reaches(source: str, module: str) -> list[Reach]:
    """Every private member ``source`` reads or sets on an object that is not its own."""
    tree = ast.parse(source)
    own = _own_names(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or not _is_private(node.attr):
            continue
        if _allowed_owner(node.value, own) or node.attr in NAMEDTUPLE_METHODS:
            continue
        if isinstance(node.value, ast.Name) and (node.value.id, node.attr) in STDLIB_PUBLIC:
            continue
        found.append(Reach(module, node.lineno, ast.unparse(node)))
    for node in ast.walk(tree):
        # ``from haiku.x import _name``: another module's private name, taken whole.
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("haiku"):
            found += [
                Reach(module, node.lineno, f"from {node.module} import {alias.name}")
                for alias in node.names
                if _is_private(alias.name)
            ]
    return sorted(found, key=lambda reach: (reach.module, reach.line, reach.expression))


def _modules() -> list[tuple[str, Path]]:
    paths = sorted(PACKAGES.glob("*/src/haiku/**/*.py"))
    return [(_module_name(path), path) for path in paths]


def _all_reaches() -> list[Reach]:
    return [reach for module, path in _modules() for reach in reaches(path.read_text(encoding="utf-8"), module)]


def test_the_scan_covers_every_package():
    modules = {module for module, _ in _modules()}
    assert {"haiku.core.store.store", "haiku.ingester.cli", "haiku.rag.client._client"} <= modules


def test_no_module_reaches_into_another_objects_private_members():
    found = [str(r) for r in _all_reaches() if (r.module, r.expression) not in ALLOWED]
    assert found == []


def test_every_allowed_reach_still_exists():
    # An entry whose reach is gone must leave the list, so the list only shrinks.
    present = {(r.module, r.expression) for r in _all_reaches()}
    assert sorted(ALLOWED - present) == []


def test_the_scan_reports_a_reach_and_spares_what_is_the_modules_own():
    sample = (
        "import os\n"
        "class Box:\n"
        "    _count = 0\n"
        "    def open(self, other):\n"
        "        self._secret = other._secret\n"  # other's private member: reported
        "        Box._count += 1\n"  # the module's own class
        "        super()._hook()\n"
        "        return self.parts._inner, other.__class__\n"  # another object's, through self: reported
        "def leave():\n"
        "    os._exit(1)\n"
    )
    assert [str(r) for r in reaches(sample, "m")] == ["m:5: other._secret", "m:8: self.parts._inner"]


def test_the_scan_reports_a_private_name_imported_from_another_module():
    sample = (
        "from haiku.rag.cli.qa_commands import _check_port\n"  # reported
        "from haiku.rag.cli._common import fail as _fail\n"  # a public name, aliased: spared
        "from os import _exit\n"  # outside the product: spared
    )
    assert [str(r) for r in reaches(sample, "m")] == ["m:1: from haiku.rag.cli.qa_commands import _check_port"]
