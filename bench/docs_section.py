"""Replacing one ``## `` section of docs/benchmarks.md with a benchmark's new figures.

The section is named by the first line of the text written (``## Quality``,
``## Scale``, …); everything up to the next ``## `` heading is replaced, and
the section is appended when the document lacks it. The file is replaced whole.
"""

from __future__ import annotations

import re
from pathlib import Path


def replace_section(document: str, section: str) -> str:
    """``document`` with the section ``section`` heads replaced by ``section`` (appended if absent)."""
    heading = section.split("\n", 1)[0].rstrip()
    pattern = re.compile(rf"^{re.escape(heading)}[ \t]*\n.*?(?=^## |\Z)", re.S | re.M)
    body = section.rstrip("\n") + "\n"
    if pattern.search(document):
        return pattern.sub(lambda _: body + "\n", document, count=1).rstrip("\n") + "\n"
    base = document.rstrip("\n")
    return (base + "\n\n" if base else "") + body


def write_section(path: Path, section: str) -> None:
    existing = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(replace_section(existing, section), encoding="utf-8")
    tmp.replace(path)
