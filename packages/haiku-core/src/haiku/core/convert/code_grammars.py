"""The classes and functions of source files in languages other than Python, read by tree-sitter
(docs/ingester.md, "Formats"): a chunk of a Go, Rust, Java, C, C++, JavaScript or TypeScript file is
headed by what it lies in, as a Python chunk is.

The grammars are those ``tree-sitter-language-pack`` (0.x) ships compiled inside its wheel, loaded by
name the first time a file of the language is read; nothing is downloaded. Without the package, or
for a language it lacks, a file gets no headings, never an error.
"""

from __future__ import annotations

from functools import cache
from typing import Any

# The format table's language -> the pack's grammar.
GRAMMARS: dict[str, str] = {
    "javascript": "javascript", "typescript": "tsx", "go": "go", "rust": "rust", "java": "java", "c": "c",
    "cpp": "cpp", "csharp": "csharp", "kotlin": "kotlin", "scala": "scala", "swift": "swift", "ruby": "ruby",
    "php": "php",
}  # fmt: skip

# Nodes that open a scope a reader names: classes, types, modules, functions and methods.
_SCOPES = frozenset({
    "class_declaration", "class_definition", "interface_declaration", "enum_declaration", "record_declaration",
    "struct_declaration", "trait_declaration", "object_declaration", "object_definition", "trait_definition",
    "namespace_definition", "namespace_declaration", "module", "class",
    "function_declaration", "function_definition", "generator_function_declaration", "method_declaration",
    "method_definition", "constructor_declaration", "method", "singleton_method", "function_item",
    "impl_item", "trait_item", "struct_item", "enum_item", "mod_item", "type_spec",
    "class_specifier", "struct_specifier", "union_specifier", "enum_specifier",
})  # fmt: skip
# C and C++ name a struct in every declaration that uses it: a scope only where it has a body.
_NEED_BODY = frozenset({"class_specifier", "struct_specifier", "union_specifier", "enum_specifier"})
_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function"})
_NAMES = frozenset({
    "identifier", "type_identifier", "field_identifier", "property_identifier", "qualified_identifier",
    "simple_identifier", "constant", "name", "destructor_name", "operator_name", "scoped_identifier",
})  # fmt: skip


@cache
def _parser(grammar: str) -> Any:
    try:
        from tree_sitter_language_pack import get_parser

        return get_parser(grammar)  # type: ignore[arg-type]
    except Exception:  # the package missing, or a grammar it does not hold: no headings
        return None


def scope_spans(language: str, text: str) -> list[tuple[int, int, tuple[str, ...]]] | None:
    """``(first line, last line, names)`` of each named scope of ``text``; None for a language no
    grammar reads."""
    grammar = GRAMMARS.get(language)
    parser = _parser(grammar) if grammar else None
    if parser is None:
        return None
    tree = parser.parse(text.encode("utf-8"))
    spans: list[tuple[int, int, tuple[str, ...]]] = []
    stack: list[tuple[Any, tuple[str, ...]]] = [(tree.root_node, ())]
    while stack:
        node, names = stack.pop()
        for child in node.named_children:
            name = _scope_name(child)
            if name is not None:
                inner = (*names, *_qualified(child, name))
                spans.append((child.start_point[0] + 1, child.end_point[0] + 1, inner))
                stack.append((child, inner))
            else:
                stack.append((child, names))
    return spans


def _scope_name(node: Any) -> str | None:
    """The name a scope node gives (``Parser``, ``parse_args``), or None when it opens no named scope."""
    kind = node.type
    if kind == "variable_declarator":  # const parseArgs = (argv) => {…}
        value = node.child_by_field_name("value")
        return _text(node.child_by_field_name("name")) if value is not None and value.type in _FUNCTION_VALUES else None
    if kind not in _SCOPES or (kind in _NEED_BODY and node.child_by_field_name("body") is None):
        return None
    if kind == "impl_item":  # Rust: `impl Parser` and `impl Display for Parser` both read as Parser
        return _text(node.child_by_field_name("type"))
    target = node.child_by_field_name("name")
    declarator = node.child_by_field_name("declarator")
    while target is None and declarator is not None:  # C and C++: int Parser::parse(int argc) {…}
        if declarator.type in _NAMES:
            target = declarator
        else:
            declarator = declarator.child_by_field_name("declarator")
    if target is None:  # grammars without a name field (Kotlin): the first identifier child
        target = next((child for child in node.named_children if child.type in _NAMES), None)
    return _text(target)


def _qualified(node: Any, name: str) -> tuple[str, ...]:
    """A method defined outside its type, under the type's name: Go's ``func (p *Parser) Parse``,
    C++'s ``int Parser::parse``, both read ``Parser > parse``."""
    receiver = node.child_by_field_name("receiver") if node.type == "method_declaration" else None
    if receiver is not None:
        types = [n for n in _descendants(receiver) if n.type == "type_identifier"]
        if types and (owner := _text(types[0])):
            return (owner, name)
    return tuple(part for part in name.split("::") if part) or (name,)


def _descendants(node: Any) -> list[Any]:
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(reversed(current.named_children))
    return found


def _text(node: Any) -> str | None:
    if node is None or node.text is None:
        return None
    text = node.text.decode("utf-8", "replace").strip()
    return text[:120] or None
