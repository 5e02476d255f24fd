"""Document filters that fail on the stored rows, or hold more than one statement (docs/client.md#search)."""

from __future__ import annotations

import pytest

from haiku.core.errors import HaikuError, InvalidFilterError
from haiku.core.models import Chunk, Document
from haiku.core.scope import DatabaseScope
from haiku.core.store import Store
from haiku.core.store.filters import check_document_filter

FAILING_ON_ROWS = {
    "CAST(title AS INT) = 1": "cast error: ",
    "1/0 = 1": "divide by zero",
}


@pytest.fixture(scope="module")
async def store(tmp_path_factory, fake_embed):
    from haiku.core.config import config_from_dict

    root = tmp_path_factory.mktemp("filters")
    config = config_from_dict(
        {"storage": {"data_dir": str(root)}, "lancedb": {"databases": {"papers": str(root / "papers.lancedb")}}}
    )
    opened = await Store.open(DatabaseScope.resolve(config).databases[0], config, create=True)
    for title in ("Secret Title", "it's; here"):
        document = Document(uri=f"file:///{len(title)}.md", title=title, content="words")
        await opened.writer().documents.upsert_document(document, [Chunk(content="words", order=0)], [fake_embed("words")])
    yield opened
    await opened.close()


@pytest.mark.parametrize("filter", sorted(FAILING_ON_ROWS))
async def test_a_filter_failing_on_the_rows_says_so_without_paths_or_values(store, filter):
    await check_document_filter(filter)  # it plans: only the stored rows make it fail
    reads = {
        "list": lambda: store.reads.list_documents(filter=filter),
        "count": lambda: store.reads.count_documents(filter),
        "search": lambda: store.search("words", search_type="fts", filter=filter),
    }
    for read in reads.values():
        with pytest.raises(InvalidFilterError) as caught:
            await read()
        message = str(caught.value)
        assert isinstance(caught.value, HaikuError)
        assert message.startswith(f"document filter {filter!r} failed on the stored documents: ")
        assert FAILING_ON_ROWS[filter] in message.lower()
        assert "\n" not in message and ".rs:" not in message and "/root" not in message
        assert "Secret" not in message and "lance error" not in message


async def test_a_filter_holding_a_second_statement_is_refused_before_and_inside_the_store(store):
    filter = "1=1; DROP TABLE documents"
    with pytest.raises(InvalidFilterError, match="text after ';' would be ignored"):
        await check_document_filter(filter)
    with pytest.raises(InvalidFilterError, match="text after ';' would be ignored"):
        await store.reads.list_documents(filter=filter)
    with pytest.raises(InvalidFilterError, match="text after ';' would be ignored"):
        await store.reads.count_documents("title = 'x';")
    assert await store.reads.count_documents() == 2


async def test_a_semicolon_inside_a_quoted_string_is_part_of_the_value(store):
    for filter in ("title = 'it''s; here'", "title LIKE '%;%'"):
        await check_document_filter(filter)
        assert [d.title for d in await store.reads.list_documents(filter=filter)] == ["it's; here"]


async def test_a_filter_the_engine_cannot_plan_is_refused_in_one_line_without_its_source_places():
    for filter in ("title LIKE 1", "title = \n'x' AND"):
        with pytest.raises(InvalidFilterError) as caught:
            await check_document_filter(filter)
        message = str(caught.value)
        assert message.startswith(f"invalid document filter {filter!r}: "), message
        assert ".rs:" not in message and "\n" not in message and "Invalid input" not in message
