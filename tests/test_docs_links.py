"""Every place the code or the documentation points into docs/ points at something there.

Code cites a page as ``docs/<page>.md`` and a section as ``docs/<page>.md#<anchor>``;
the pages link to each other as ``[text](<page>.md#<anchor>)`` and within a page as
``[text](#<anchor>)``. An anchor is a heading's id as GitHub renders it (lower case,
punctuation dropped, spaces as hyphens, ``-1``, ``-2`` … for repeats) or an explicit
``<a id="…">``. A section renamed without its citations fails here, naming them.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# Where the code and the docs that cite docs/ live; .venv and caches are not ours.
CITING = ("packages", "tests", "bench", "tools", "examples", "configs", "docs", ".ci")
CITING_FILES = ("README.md", "CONTRIBUTING.md", "Makefile")
SUFFIXES = {".py", ".md", ".yaml", ".yml", ".sh", ".toml", ".txt", ".html", ".js", ".css", ""}

# A path in a string literal ("docs/notes.md" as test data) is no citation.
CODE_CITATION = re.compile(r"(?<![\w/.\-\"'])docs/([\w./-]+?\.md)(?:#([\w-]+))?")
MARKDOWN_LINK = re.compile(r"\]\(([^)\s#]*\.md)?#([^)\s]+)\)")
HEADING = re.compile(r" {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
EXPLICIT_ID = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")


def github_slug(heading: str) -> str:
    """The id GitHub gives a heading with this text (before any ``-N`` for repeats)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = re.sub(r"(?<!\w)[*_]+|[*_]+(?!\w)", "", text)  # emphasis, not snake_case
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


@cache
def page_anchors(page: Path) -> tuple[frozenset[str], tuple[str, ...]]:
    """The anchors ``page`` renders, and any explicit id it sets twice."""
    anchors: set[str] = set()
    repeats: dict[str, int] = {}
    explicit: list[str] = []
    fence: str | None = None
    for line in page.read_text(encoding="utf-8").splitlines():
        opened = FENCE.match(line)
        if opened:
            mark = opened.group(1)
            if fence is None:
                fence = mark
            elif mark[0] == fence[0] and len(mark) >= len(fence):
                fence = None
            continue
        if fence is not None:
            continue
        heading = HEADING.match(line)
        if heading:
            slug = github_slug(heading.group(1))
            seen = repeats.get(slug, 0)
            repeats[slug] = seen + 1
            anchors.add(slug if seen == 0 else f"{slug}-{seen}")
        explicit += EXPLICIT_ID.findall(line)
    twice = tuple(sorted({name for name in explicit if explicit.count(name) > 1}))
    return frozenset(anchors | set(explicit)), twice


def citing_files() -> list[Path]:
    found = [REPO / name for name in CITING_FILES if (REPO / name).is_file()]
    for folder in CITING:
        for path in sorted((REPO / folder).rglob("*")):
            if path.is_file() and path.suffix in SUFFIXES and "__pycache__" not in path.parts:
                found.append(path)
    return found


def citations() -> list[tuple[str, Path, str | None]]:
    """(where, page cited, anchor or None) for every pointer into docs/."""
    found: list[tuple[str, Path, str | None]] = []
    for path in citing_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # a binary fixture
        where = str(path.relative_to(REPO))
        for match in CODE_CITATION.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append((f"{where}:{line}", REPO / "docs" / match.group(1), match.group(2)))
        if path.suffix == ".md":
            for match in MARKDOWN_LINK.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                page = (path.parent / match.group(1)).resolve() if match.group(1) else path
                found.append((f"{where}:{line}", page, match.group(2)))
    return found


def test_github_slugs_follow_githubs_rules():
    assert github_slug("ask, chat, analyze, mcp") == "ask-chat-analyze-mcp"
    assert github_slug("`haiku-ingester run-batch --json`") == "haiku-ingester-run-batch---json"
    assert github_slug("Configuration (`ingester`)") == "configuration-ingester"
    assert github_slug("Scanned pages (OCR)") == "scanned-pages-ocr"
    assert github_slug("**Bold** and [a link](x.md)") == "bold-and-a-link"
    assert github_slug("read_consistency_interval_seconds") == "read_consistency_interval_seconds"


def test_repeated_headings_get_numbered_anchors(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# A\n\n## Notes\n\n```yaml\n# Notes\n```\n\n## Notes\n\n<a id=\"x\"></a>\n")
    anchors, twice = page_anchors(page)
    assert anchors == {"a", "notes", "notes-1", "x"}
    assert twice == ()


def test_the_scan_finds_the_citation_forms_in_use():
    found = citations()
    assert len(found) > 200, "the scan no longer reads the repository's citations"
    anchored = [c for c in found if c[2]]
    assert any(where.startswith("packages/") for where, _, _ in anchored)
    assert any(where.startswith("docs/") for where, _, _ in anchored)


def test_every_cited_docs_page_exists():
    missing = sorted({f"{where}: {page.relative_to(REPO)}" for where, page, _ in citations() if not page.is_file()})
    assert not missing, "cited pages that do not exist:\n" + "\n".join(missing)


def test_every_cited_anchor_exists():
    broken = [
        f"{where}: {page.relative_to(REPO)}#{anchor}"
        for where, page, anchor in citations()
        if anchor and page.is_file() and anchor not in page_anchors(page)[0]
    ]
    assert not broken, "cited sections that no page renders:\n" + "\n".join(broken)


def test_no_page_sets_an_explicit_anchor_twice():
    twice = {
        str(page.relative_to(REPO)): page_anchors(page)[1]
        for page in sorted((REPO / "docs").rglob("*.md"))
        if page_anchors(page)[1]
    }
    assert not twice, f"anchors set twice (a link lands on the first only): {twice}"
