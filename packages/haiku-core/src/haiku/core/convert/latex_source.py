"""A LaTeX source made plain enough for docling's LaTeX backend (docs/ingester.md, "Formats").

docling reads LaTeX without running TeX, so a paper's own macros and a few
common packages leak into the text: ``\\newcommand{\\model}{Mistral~7B\\xspace}``
comes out as ``Mistral~7B\\xspace``, ``Fig.~1`` as ``Fig.1``, and wrapfigure's
placement arguments as a paragraph ``r0.48``. Before conversion, argument-less
macros the file defines are expanded where used, ``\\xspace`` is dropped (the
space after it in the source is kept), an unescaped ``~`` (a non-breaking
space) becomes a space outside URLs, and ``wrapfigure``/``wraptable`` become
plain ``figure``/``table`` environments.
"""

from __future__ import annotations

import re

_DEFINITION = re.compile(r"\\(?:re)?newcommand\*?\s*\{?\s*\\([A-Za-z@]+)\s*\}?\s*\{|\\def\s*\\([A-Za-z@]+)\s*\{")
_XSPACE = re.compile(r"\\xspace(?![A-Za-z@])")
_WRAP = re.compile(
    r"\\begin\{wrap(figure|table)\}\s*(?:\[[^\]]*\])?\s*\{[^{}]*\}\s*(?:\[[^\]]*\])?\s*\{[^{}]*\}"
)
_URL = re.compile(r"\\(?:url|href)\s*\{[^{}]*\}")
_TILDE = re.compile(r"(?<!\\)~")
_COMMENT = re.compile(r"(?<!\\)%.*")
_EXPANSION_ROUNDS = 3  # a macro defined through another: \model in \modelfull


def _braced(text: str, start: int) -> int | None:
    """The index just past the group that opens at ``start - 1`` (its ``{``), or None if unbalanced."""
    depth = 1
    for index in range(start, len(text)):
        char = text[index]
        if char == "\\":
            continue
        if char == "{" and text[index - 1] != "\\":
            depth += 1
        elif char == "}" and text[index - 1] != "\\":
            depth -= 1
            if depth == 0:
                return index + 1
    return None


def simple_macros(source: str) -> dict[str, str]:
    """``{name: body}`` of the macros without arguments the source defines (``\\newcommand``, ``\\def``)."""
    macros: dict[str, str] = {}
    text = _COMMENT.sub("", source)
    for match in _DEFINITION.finditer(text):
        end = _braced(text, match.end())
        if end is not None:
            macros[match.group(1) or match.group(2)] = text[match.end() : end - 1]
    return macros


def plain_latex_source(source: str) -> str:
    """``source`` with its own simple macros expanded and the leaking package markup removed."""
    macros = simple_macros(source)
    body_at = source.find("\\begin{document}")
    head, body = (source[:body_at], source[body_at:]) if body_at >= 0 else ("", source)
    if macros:
        pattern = re.compile(r"\\(" + "|".join(sorted(map(re.escape, macros), key=len, reverse=True)) + r")(?![A-Za-z@])")
        for _ in range(_EXPANSION_ROUNDS):
            expanded = pattern.sub(lambda m: macros[m.group(1)], body)
            if expanded == body:
                break
            body = expanded
        title = re.search(r"\\title\s*\{", head)
        if title is not None and (end := _braced(head, title.end())) is not None:
            inner = head[title.end() : end - 1]
            for _ in range(_EXPANSION_ROUNDS):
                inner = pattern.sub(lambda m: macros[m.group(1)], inner)
            head = head[: title.end()] + inner + head[end - 1 :]
    text = head + body
    text = _XSPACE.sub("", text)
    text = _WRAP.sub(lambda m: "\\begin{" + m.group(1) + "}", text)
    text = re.sub(r"\\end\{wrap(figure|table)\}", lambda m: "\\end{" + m.group(1) + "}", text)
    urls: list[str] = []
    text = _URL.sub(lambda m: urls.append(m.group()) or f"\x00{len(urls) - 1}\x00", text)
    text = _TILDE.sub(" ", text)
    return re.sub(r"\x00(\d+)\x00", lambda m: urls[int(m.group(1))], text)
