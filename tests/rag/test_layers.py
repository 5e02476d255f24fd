"""Inside haiku.rag, layers import downward only (docs/design.md, "Three packages, one namespace").

The scan reads every import statement of every module with ``ast``, module-level
and inside functions alike, so a lazy import cannot hide an upward edge. There is
no exception: questions take a client from above it (``haiku.rag.qa``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import haiku.rag
from support import absolute_import

ROOT = Path(haiku.rag.__file__).parent

# Bottom to top. The rerankers are the client's tools; the sandbox runs code for the
# capability over the client's documents; the screens sit beside the MCP server; the CLI
# starts both.
LAYERS = ("rerankers", "client", "llm", "sandbox", "capability", "qa", "mcp", "apps", "cli")

# (importing module, imported module, enclosing function): documented exceptions; none.
ALLOWED_UPWARD: set[tuple[str, str, str | None]] = set()


@dataclass(frozen=True)
class Edge:
    importer: str
    imported: str
    function: str | None
    line: int

    def __str__(self) -> str:
        where = f" in {self.function}()" if self.function else ""
        return f"{self.importer}:{self.line}{where} imports {self.imported}"


def _module_name(path: Path) -> str:
    parts = ["haiku", "rag", *path.relative_to(ROOT).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _edges(path: Path) -> list[Edge]:
    module = _module_name(path)
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    edges: list[Edge] = []

    def visit(node: ast.AST, function: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else function
            if isinstance(child, ast.Import):
                edges.extend(Edge(module, alias.name, function, child.lineno) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                target = absolute_import(module, path.name == "__init__.py", child)
                edges.append(Edge(module, target, function, child.lineno))
            visit(child, inner)

    visit(tree, None)
    return [e for e in edges if e.imported == "haiku.rag" or e.imported.startswith("haiku.rag.")]


def _layer(module: str) -> str | None:
    """The layer a module of haiku.rag belongs to; None for the package root (its version)."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 else None


def _all_edges() -> list[Edge]:
    return [edge for path in sorted(ROOT.rglob("*.py")) for edge in _edges(path)]


def _upward(edges: list[Edge]) -> list[Edge]:
    found = []
    for edge in edges:
        source, target = _layer(edge.importer), _layer(edge.imported)
        if source is None or target is None or source == target:
            continue
        if LAYERS.index(target) > LAYERS.index(source) and (
            edge.importer,
            edge.imported,
            edge.function,
        ) not in ALLOWED_UPWARD:
            found.append(edge)
    return found


def _layer_cycles(edges: list[Edge]) -> list[tuple[str, str]]:
    """Pairs of layers that import each other, once the documented exception is set aside."""
    pairs = {
        (_layer(e.importer), _layer(e.imported))
        for e in edges
        if (e.importer, e.imported, e.function) not in ALLOWED_UPWARD
    }
    pairs = {(a, b) for a, b in pairs if a is not None and b is not None and a != b}
    reach = {a: {b for x, b in pairs if x == a} for a, _ in pairs}
    changed = True
    while changed:
        changed = False
        for targets in reach.values():
            more = set().union(*(reach.get(b, set()) for b in targets)) - targets
            if more:
                targets |= more
                changed = True
    return sorted((a, b) for a, targets in reach.items() for b in targets if a < b and a in reach.get(b, set()))


def test_every_subpackage_of_haiku_rag_has_a_layer():
    subpackages = {p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    modules = {p.stem for p in ROOT.glob("*.py")} - {"__init__"}
    assert (sorted(subpackages - set(LAYERS)), sorted(modules)) == ([], [])


def test_no_module_of_haiku_rag_imports_a_layer_above_its_own():
    assert [str(edge) for edge in _upward(_all_edges())] == []


def test_no_two_layers_of_haiku_rag_import_each_other():
    assert _layer_cycles(_all_edges()) == []


def test_the_scan_sees_imports_inside_functions():
    edges = {(e.importer, e.imported, e.function) for e in _all_edges()}
    assert ("haiku.rag.client._client", "haiku.rag.client._image_search", "search_by_image") in edges
    assert not ALLOWED_UPWARD


def test_the_scan_reports_an_upward_import_inside_a_function():
    # The scan itself must catch what it is meant to catch: a lazy import from a lower layer.
    edges = [Edge("haiku.rag.capability.run", "haiku.rag.qa.chat", "ask", 1)]
    assert [str(e) for e in _upward(edges)] == ["haiku.rag.capability.run:1 in ask() imports haiku.rag.qa.chat"]
    assert _layer_cycles([*edges, Edge("haiku.rag.qa", "haiku.rag.capability", "ask", 2)]) == [
        ("capability", "qa")
    ]
