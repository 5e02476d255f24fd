"""No module of the three packages is over 400 lines (CONTRIBUTING.md, "Code").

A module that long holds more than one job; split it by what it holds (one
job per module, named for it), not by where the 400th line falls.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MAX_LINES = 400


def _line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_the_scan_finds_the_modules_of_every_package():
    sources = sorted(REPO.glob("packages/*/src"))
    assert [src.parent.name for src in sources] == ["haiku-core", "haiku-ingester", "haiku-rag-cli"]
    assert all(any(src.rglob("*.py")) for src in sources)


def test_no_module_under_packages_is_over_400_lines():
    too_long = {
        str(path.relative_to(REPO)): lines
        for path in sorted(REPO.glob("packages/*/src/**/*.py"))
        if (lines := _line_count(path)) > MAX_LINES
    }
    assert not too_long, f"modules over {MAX_LINES} lines (split each by what it holds): {too_long}"
