"""The classes and functions a line of source lies in, so a code chunk's headings name them
(docs/ingester.md, "Formats": a hit in a Python file reads ``Parser > parse_args``).

Python is read with its own ``ast``; a file that does not parse (another
Python version's syntax, a fragment) gets no headings, never an error. Other
languages are read by the tree-sitter grammars ``tree-sitter-language-pack``
ships inside its wheel (``code_grammars``), loaded on first use.
"""

from __future__ import annotations

import ast
from bisect import bisect_right

_SCOPES = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


class CodeScopes:
    """Answers ``at(line)``: the enclosing class and function names, outermost first."""

    def __init__(self, spans: list[tuple[int, int, tuple[str, ...]]]) -> None:
        # (first line, last line, names): nested spans come after the span holding them.
        self._spans = sorted(spans)
        self._starts = [start for start, _, _ in self._spans]

    @classmethod
    def of_python(cls, text: str) -> CodeScopes | None:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError):
            return None
        spans: list[tuple[int, int, tuple[str, ...]]] = []

        def visit(node: ast.AST, names: tuple[str, ...]) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, _SCOPES):
                    inner = (*names, child.name)
                    first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                    spans.append((first, child.end_lineno or child.lineno, inner))
                    visit(child, inner)
                else:
                    visit(child, names)

        visit(tree, ())
        return cls(spans)

    def at(self, line: int) -> list[str]:
        """The names of the innermost class or function holding ``line`` (1-based), outermost first."""
        best: tuple[str, ...] = ()
        for start, end, names in self._spans[: bisect_right(self._starts, line)]:
            if start <= line <= end and len(names) > len(best):
                best = names
        return list(best)


def scopes_for(language: str | None, text: str) -> CodeScopes | None:
    """The scopes of a source file in ``language``, where the language is one this module reads."""
    language = (language or "").lower()
    if language == "python":
        return CodeScopes.of_python(text)
    from haiku.core.convert.code_grammars import scope_spans

    spans = scope_spans(language, text)
    return CodeScopes(spans) if spans is not None else None


def common_scope(scopes: list[list[str]]) -> list[str]:
    """The scope every one of ``scopes`` lies in (a chunk that spans two functions of a class: the class)."""
    if not scopes:
        return []
    shared = scopes[0]
    for other in scopes[1:]:
        n = 0
        while n < min(len(shared), len(other)) and shared[n] == other[n]:
            n += 1
        shared = shared[:n]
    return list(shared)
