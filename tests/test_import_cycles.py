"""No import circle among the modules of the three packages and the benchmarks (docs/design.md).

The graph has one node per module under ``packages/*/src`` and ``bench/``, and
an edge for every import statement naming another of them, found with
``ast`` anywhere in the module: at module level, under ``if TYPE_CHECKING:``
and inside functions alike, since a lazy or type-only import still ties the
two modules together for whoever changes either. ``from package import name``
is an edge to ``package.name`` when that is a module, else to ``package``.
Importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` too, but those
implicit edges are left out: every package re-exports its parts, so they
would join each package to everything inside it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from support import absolute_import

REPO = Path(__file__).resolve().parent.parent

# Circles allowed, each named, while one is being taken apart in its own change; there
# are none: questions take a client from above it (``haiku.rag.qa``), so nothing in
# the client imports upward. The test fails on an entry that no longer matches any.
# A circle found is allowed when all its modules lie inside one entry.
EXPECTED_CYCLES: dict[str, frozenset[str]] = {}


@dataclass(frozen=True)
class Edge:
    importer: str
    imported: str
    path: Path
    line: int

    def __str__(self) -> str:
        return f"{self.importer} ({self.path.relative_to(REPO)}:{self.line}) imports {self.imported}"


def _roots() -> Iterator[tuple[Path, str]]:
    """(folder, dotted prefix of the modules in it)."""
    for src in sorted(REPO.glob("packages/*/src")):
        yield src, ""
    yield REPO / "bench", "bench"


def modules() -> dict[str, tuple[Path, bool]]:
    """Every module: dotted name -> (file, whether it is a package's ``__init__``)."""
    found: dict[str, tuple[Path, bool]] = {}
    for root, prefix in _roots():
        for path in sorted(root.rglob("*.py")):
            parts = [*([prefix] if prefix else []), *path.relative_to(root).with_suffix("").parts]
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            found[".".join(parts)] = (path, is_package)
    return found


def _known(name: str, known: dict[str, tuple[Path, bool]]) -> str | None:
    """The longest known module ``name`` starts with (``import a.b.c`` names ``a.b.c``)."""
    parts = name.split(".")
    while parts:
        if ".".join(parts) in known:
            return ".".join(parts)
        parts.pop()
    return None


def edges_of(module: str, known: dict[str, tuple[Path, bool]]) -> list[Edge]:
    path, is_package = known[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    targets: list[tuple[str | None, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets.extend((_known(alias.name, known), node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = absolute_import(module, is_package, node)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                targets.append((submodule if submodule in known else _known(base, known), node.lineno))
    return [Edge(module, target, path, line) for target, line in targets if target is not None and target != module]


def import_graph() -> dict[str, list[Edge]]:
    known = modules()
    return {module: edges_of(module, known) for module in known}


def cycles(graph: dict[str, list[Edge]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted({e.imported for e in graph[start]})))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted({e.imported for e in graph[successor]}))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(frozenset(component))
    return found


def one_circle(component: frozenset[str], graph: dict[str, list[Edge]]) -> list[Edge]:
    """One closed path through the component, as the import statements that make it."""
    start = min(component)
    paths: dict[str, list[Edge]] = {start: []}
    frontier = [start]
    while frontier:  # breadth first: the shortest way back to the start
        following: list[str] = []
        for node in frontier:
            for edge in graph[node]:
                if edge.imported == start:
                    return [*paths[node], edge]
                if edge.imported in component and edge.imported not in paths:
                    paths[edge.imported] = [*paths[node], edge]
                    following.append(edge.imported)
        frontier = following
    raise AssertionError(f"no circle through {start}")  # pragma: no cover - a component has one


def describe(component: frozenset[str], graph: dict[str, list[Edge]]) -> str:
    circle = "\n    ".join(str(edge) for edge in one_circle(component, graph))
    return f"{len(component)} modules: {', '.join(sorted(component))}\n  for example:\n    {circle}"


def unexpected(found: Iterable[frozenset[str]]) -> list[frozenset[str]]:
    return [c for c in found if not any(c <= allowed for allowed in EXPECTED_CYCLES.values())]


def test_the_scan_sees_every_kind_of_import():
    """Module-level, type-only and function-level imports, relative ones too, all make edges."""
    known = modules()
    edges = {(e.importer, e.imported) for e in edges_of("haiku.rag.client._client", known)}
    assert ("haiku.rag.client._client", "haiku.rag.client._image_search") in edges  # inside search_by_image
    assert ("haiku.rag.client._client", "haiku.core.store") in edges  # under TYPE_CHECKING
    assert ("haiku.rag.client._client", "haiku.rag.client._database") in edges  # at module level
    assert "bench.scale" in known and "haiku.core.store.filters" in known


def test_no_import_circle_beyond_the_expected_ones():
    graph = import_graph()
    found = cycles(graph)
    new = unexpected(found)
    assert not new, "import circles:\n" + "\n".join(describe(c, graph) for c in new)


def test_there_is_no_import_circle_at_all():
    """The layers inside haiku.rag import only downward, with no exception (docs/design.md)."""
    assert not EXPECTED_CYCLES, "an allowed circle is back; take it apart instead of allowing it"
    graph = import_graph()
    found = cycles(graph)
    assert not found, "import circles:\n" + "\n".join(describe(c, graph) for c in found)


def test_every_expected_circle_still_exists():
    found = cycles(import_graph())
    gone = [name for name, allowed in EXPECTED_CYCLES.items() if not any(c <= allowed for c in found)]
    assert not gone, f"these circles are gone; remove them from EXPECTED_CYCLES: {', '.join(gone)}"
