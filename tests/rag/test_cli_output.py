"""How search results and documents read on a terminal and as JSON."""

from __future__ import annotations

from haiku.core.models import SearchResult
from haiku.rag.cli._output import print_results


def result(**fields) -> SearchResult:
    return SearchResult(content="Lava flows downhill.", score=0.5, chunk_id="c1", source="papers", **fields)


def test_a_result_shows_where_its_document_came_from_and_its_pages(capsys):
    print_results(
        [result(document_title="Volcanoes", document_uri="file:///docs/volcanoes.pdf", page_numbers=[3, 2, 3])],
        label=True,
    )
    lines = capsys.readouterr().out.splitlines()
    assert lines[:4] == [
        "1. c1  score=0.5000  Volcanoes",
        "database: papers",
        "uri: file:///docs/volcanoes.pdf",
        "pages: 2, 3",
    ]


def test_a_result_titled_by_its_uri_does_not_repeat_it_and_shows_no_pages_when_none_are_known(capsys):
    print_results([result(document_uri="file:///docs/notes.txt")], label=False)
    assert capsys.readouterr().out.splitlines()[:2] == ["1. c1  score=0.5000  file:///docs/notes.txt", "    Lava flows downhill."]


def test_a_document_as_json_has_iso_dates_and_its_content_only_when_asked():
    from datetime import UTC, datetime

    from haiku.core.models import Document

    when = datetime(2026, 6, 30, 12, 0, tzinfo=UTC)
    document = Document(id="d1", title="Volcanoes", content="Lava.", created_at=when, updated_at=when, source="wiki")
    listed, whole = document.as_json(content=False), document.as_json()
    assert ("content" in listed, whole["content"], listed["created_at"], listed["source"]) == (
        False, "Lava.", "2026-06-30T12:00:00Z", "wiki"
    )
