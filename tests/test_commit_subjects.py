"""`make lint`'s commit-subject rule (CONTRIBUTING.md, "Commits"), on real git repositories."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "tools" / "commit_subjects.py"
LONG = "Add a subject that goes on and on well past the seventy-two characters allowed"


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def _commit(repo: Path, name: str, subject: str) -> None:
    (repo / name).write_text(subject)
    _git(repo, "add", name)
    _git(repo, "commit", "-q", "-m", subject)


def _check(repo: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), "--repo", str(repo)], capture_output=True, text=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    _git(tmp_path, "init", "-q")
    _commit(tmp_path, "old.txt", LONG)  # before the rule: left as written
    _commit(tmp_path, "CONTRIBUTING.md", "Add the contribution rules")
    return tmp_path


def test_long_subjects_before_the_rule_commit_pass(repo: Path) -> None:
    _commit(repo, "a.txt", "Keep a short subject")
    assert _check(repo).returncode == 0


def test_a_long_subject_after_the_rule_commit_fails_naming_it(repo: Path) -> None:
    _commit(repo, "a.txt", "Keep a short subject")
    _commit(repo, "b.txt", LONG)
    result = _check(repo)
    assert result.returncode == 1
    assert LONG in result.stdout and f"{len(LONG)} characters" in result.stdout


def test_a_subject_of_exactly_72_characters_passes(repo: Path) -> None:
    _commit(repo, "a.txt", "x" * 72)
    assert _check(repo).returncode == 0
    _commit(repo, "b.txt", "x" * 73)
    assert _check(repo).returncode == 1
