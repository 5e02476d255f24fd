"""The Python writer (docs/ingester.md, "From Python") is type-checked: a caller's mistakes are found
by mypy, through the package's lazily loaded names, and the package itself checks clean."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import haiku.ingester
import haiku.ingester.manual

REPO = Path(__file__).resolve().parents[2]
SOURCES = [REPO / "packages" / name / "src" for name in ("haiku-core", "haiku-ingester")]

CALLER = """
import asyncio
from haiku.core.config import AppConfig
from haiku.ingester import AddResult, Ingester


async def main(config: AppConfig) -> list[str]:
    async with Ingester(config) as ing:
        added: AddResult = await ing.add("paper.pdf", database="papers", metadata={"year": 2024})
        note = await ing.add_text("# Notes", database="papers", title="Notes", identity="notes")
        gone = await ing.delete(note.document_id or note.argument, database="papers")
    return [added.outcome, gone.outcome]
"""

MISTAKES = """
from haiku.core.config import AppConfig
from haiku.ingester import Ingester


async def main(config: AppConfig) -> int:
    async with Ingester(config) as ing:
        await ing.add("paper.pdf")
        result = await ing.add_text(b"x", database="papers")
        return result.outcome
"""


def mypy(tmp_path: Path, *targets: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MYPYPATH": os.pathsep.join(str(s) for s in SOURCES)}
    command = [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path.parent / "mypy-cache"),
               "--namespace-packages", "--explicit-package-bases", "--follow-imports=silent",
               "--ignore-missing-imports", "--no-site-packages", "--no-error-summary", *map(str, targets)]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)


def test_the_lazily_loaded_names_are_the_ones_type_checkers_see():
    assert set(haiku.ingester.__all__) - {"__version__"} == set(haiku.ingester._LAZY)
    assert set(haiku.ingester.manual.__all__) == set(haiku.ingester.manual._LAZY)


def test_a_caller_of_the_writer_is_type_checked_and_its_mistakes_are_found(tmp_path):
    manual = SOURCES[1] / "haiku" / "ingester" / "manual"
    (tmp_path / "caller.py").write_text(CALLER)
    clean = mypy(tmp_path, manual, SOURCES[1] / "haiku" / "ingester" / "__init__.py", "caller.py")
    assert clean.returncode == 0, clean.stdout + clean.stderr

    (tmp_path / "mistakes.py").write_text(MISTAKES)
    found = mypy(tmp_path, "mistakes.py")
    assert found.returncode == 1
    assert 'Missing named argument "database" for "add" of "Ingester"' in found.stdout
    assert 'Missing named argument "title" for "add_text" of "Ingester"' in found.stdout
    assert 'Incompatible return value type (got "str", expected "int")' in found.stdout
