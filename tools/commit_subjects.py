"""Fail when a commit subject is longer than 72 characters (CONTRIBUTING.md, "Commits").

The rule holds from the commit that added CONTRIBUTING.md onwards: older
history is left as it was written. Run by `make lint`.

    python tools/commit_subjects.py [--max 72] [--repo .]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

RULE_FILE = "CONTRIBUTING.md"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def rule_commit(repo: Path) -> str | None:
    """The commit that added the rule file, or None where history does not show it."""
    added = _git(repo, "log", "--diff-filter=A", "--format=%H", "--", RULE_FILE).split()
    return added[-1] if added else None


def long_subjects(repo: Path, limit: int) -> list[tuple[str, str]]:
    """(short hash, subject) of every commit after the rule commit whose subject exceeds ``limit``."""
    base = rule_commit(repo)
    if base is None:
        return []
    lines = _git(repo, "log", "--format=%h%x00%s", f"{base}..HEAD").splitlines()
    pairs = [tuple(line.split("\x00", 1)) for line in lines if line]
    return [(h, s) for h, s in pairs if len(s) > limit]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=72, help="longest subject allowed (default 72)")
    parser.add_argument("--repo", type=Path, default=Path("."), help="repository to check (default .)")
    args = parser.parse_args(argv)
    try:
        offenders = long_subjects(args.repo, args.max)
    except (OSError, subprocess.CalledProcessError) as error:
        print(f"commit subjects not checked: git failed ({error})", file=sys.stderr)
        return 0
    for short, subject in offenders:
        print(f"{short}: subject is {len(subject)} characters (at most {args.max}): {subject}")
    if offenders:
        print(f"{len(offenders)} commit subject(s) too long; see CONTRIBUTING.md", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
