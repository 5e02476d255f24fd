"""Each package imports only what sits below it (docs/design.md, "Three packages, one namespace").

``haiku.core`` imports neither ``haiku.ingester`` nor ``haiku.rag``, and those
two never import each other: whatever both need is in ``haiku.core``. The scan
reads every import statement of every module with ``ast``, module-level, under
``if TYPE_CHECKING:`` and inside functions alike.
"""

from __future__ import annotations

import ast
from pathlib import Path

from support import absolute_import

PACKAGES = Path(__file__).resolve().parent.parent / "packages"

# Each package, the packages it must never import.
FORBIDDEN = {
    "haiku.core": ("haiku.ingester", "haiku.rag"),
    "haiku.ingester": ("haiku.rag",),
    "haiku.rag": ("haiku.ingester",),
}
SOURCES = {"haiku.core": "haiku-core", "haiku.ingester": "haiku-ingester", "haiku.rag": "haiku-rag-cli"}


def _imports(path: Path, module: str) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.append((node.lineno, absolute_import(module, path.name == "__init__.py", node)))
    return found


def _crossings(package: str) -> list[str]:
    src = PACKAGES / SOURCES[package] / "src"
    crossings = []
    for path in sorted(src.rglob("*.py")):
        module = ".".join(path.relative_to(src).with_suffix("").parts)
        for line, imported in _imports(path, module):
            if any(imported == other or imported.startswith(other + ".") for other in FORBIDDEN[package]):
                crossings.append(f"{path.relative_to(PACKAGES)}:{line} imports {imported}")
    return crossings


def test_the_scan_sees_an_import_inside_a_function(tmp_path):
    path = tmp_path / "example.py"
    path.write_text("def later():\n    from haiku.rag.client import HaikuRAG\n", encoding="utf-8")
    assert _imports(path, "haiku.ingester.example") == [(2, "haiku.rag.client")]


def test_core_imports_neither_package_above_it():
    assert _crossings("haiku.core") == []


def test_the_ingester_and_haiku_rag_never_import_each_other():
    assert (_crossings("haiku.ingester"), _crossings("haiku.rag")) == ([], [])
