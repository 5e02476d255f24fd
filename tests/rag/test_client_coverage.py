"""What a client covers, and the clients it lends (docs/client.md)."""

from __future__ import annotations

import pytest
from rag_support import build_config

from haiku.core.errors import AmbiguousDatabaseError, ReadOnlyError, UnknownDatabaseError
from haiku.rag.client import DatabaseScope, HaikuRAG
from haiku.rag.qa import ask


def test_database_scope_is_reexported_from_the_client_package():
    from haiku.core.scope import DatabaseScope as CoreScope

    assert DatabaseScope is CoreScope


async def test_set_client_reports_coverage_before_entering_and_entering_opens_nothing(two_db, open_log):
    client = HaikuRAG(config=two_db)
    assert client.covers_multiple is True
    assert client.source_names == ("papers", "wiki")
    async with client:
        assert open_log == []


async def test_client_over_one_configured_database_names_every_result(built, tmp_path):
    config = build_config(tmp_path / "data", {"papers": str(built["papers"])})
    async with HaikuRAG(config=config) as client:
        assert client.source == "papers"
        results = await client.search("light energy in plants")
    assert results and {r.source for r in results} == {"papers"}


async def test_default_database_is_named_haiku_rag_and_a_path_by_its_stem(built, tmp_path):
    from support import copy_database

    config = build_config(tmp_path / "data")
    copy_database(built["papers"], tmp_path / "data" / "haiku.rag.lancedb")
    async with HaikuRAG(config=config) as client:
        assert client.source == "haiku.rag"
    async with HaikuRAG(db_path=built["wiki"].parent / "wiki.lancedb", config=config) as client:
        assert client.source == "wiki"


def test_db_path_beside_sources_is_refused_at_construction(tmp_path):
    with pytest.raises(AmbiguousDatabaseError):
        HaikuRAG(db_path=tmp_path / "x.lancedb", config=build_config(tmp_path / "data"), sources=["a"])


async def test_empty_sources_on_the_constructor_raise_value_error(two_db):
    with pytest.raises(ValueError, match=r"sources=\[\]"):
        async with HaikuRAG(config=two_db, sources=[]):
            pass


async def test_unknown_constructor_source_raises_unknown_database(two_db):
    with pytest.raises(UnknownDatabaseError, match="nope"):
        async with HaikuRAG(config=two_db, sources=["nope"]):
            pass


async def test_create_on_a_set_is_refused(tmp_path):
    config = build_config(tmp_path / "data", {"papers": str(tmp_path / "p.lancedb"), "wiki": str(tmp_path / "w.lancedb")})
    with pytest.raises(AmbiguousDatabaseError, match="sources=\\[name\\]"):
        async with HaikuRAG(config=config, create=True):
            pass
    assert not (tmp_path / "p.lancedb").exists() and not (tmp_path / "w.lancedb").exists()


async def test_create_with_one_source_creates_that_database_only(tmp_path):
    config = build_config(tmp_path / "data", {"papers": str(tmp_path / "p.lancedb"), "wiki": str(tmp_path / "w.lancedb")})
    async with HaikuRAG(config=config, create=True, sources=["papers"]) as client:
        assert await client.count_documents() == 0
    assert (tmp_path / "p.lancedb").is_dir()
    assert not (tmp_path / "w.lancedb").exists()


async def test_tag_on_a_set_is_refused(two_db):
    with pytest.raises(AmbiguousDatabaseError, match="tag"):
        async with HaikuRAG(config=two_db, tag="t"):
            pass


def test_tag_with_create_is_a_value_error(tmp_path):
    with pytest.raises(ValueError):
        HaikuRAG(db_path=tmp_path / "p.lancedb", config=build_config(tmp_path / "data"), tag="t", create=True)


async def test_set_client_has_no_store_and_refuses_vacuum_naming_both(two_db):
    async with HaikuRAG(config=two_db) as client:
        with pytest.raises(AttributeError):
            _ = client.store
        with pytest.raises(AmbiguousDatabaseError, match="papers, wiki"):
            await client.database().vacuum()


async def test_reader_for_returns_one_cached_borrowed_client(two_db):
    async with HaikuRAG(config=two_db) as client:
        papers = await client.reader_for("papers")
        assert papers.source == "papers"
        assert await client.reader_for("papers") is papers
        assert await client.reader_for(None) is None


async def test_reader_for_none_on_one_database_is_the_client_itself(built, tmp_path):
    config = build_config(tmp_path / "data", {"papers": str(built["papers"])})
    async with HaikuRAG(config=config) as client:
        assert await client.reader_for(None) is client
        assert await client.reader_for("papers") is client


async def test_clients_covering_empty_none_and_unknown(two_db, built, tmp_path, open_log):
    async with HaikuRAG(config=two_db) as client:
        assert await client.clients_covering([]) == []
        assert open_log == []
        covering = await client.clients_covering(None)
        assert [c.source for c in covering] == ["papers", "wiki"]
    single = build_config(tmp_path / "data1", {"papers": str(built["papers"])})
    async with HaikuRAG(config=single) as client:
        with pytest.raises(UnknownDatabaseError):
            await client.clients_for(["other"])


async def test_clients_for_keeps_the_given_order_and_collapses_duplicates(two_db):
    async with HaikuRAG(config=two_db) as client:
        clients = await client.clients_for(["wiki", "papers", "wiki"])
        assert [c.source for c in clients] == ["wiki", "papers"]


async def test_borrowed_clients_of_a_read_only_set_are_read_only(two_db):
    async with HaikuRAG(config=two_db, read_only=True) as client:
        papers, wiki = await client.clients_for(["papers", "wiki"])
        assert papers.is_read_only and wiki.is_read_only
        with pytest.raises(ReadOnlyError):
            await papers.database().vacuum()


async def test_borrowed_clients_close_with_their_owner_but_not_alone(two_db):
    client = HaikuRAG(config=two_db)
    async with client:
        papers = await client.reader_for("papers")
        async with papers:
            pass
        assert not papers.is_closed
        assert await client.search("light energy", sources=["papers"])
    assert papers.is_closed
    with pytest.raises(RuntimeError, match="closed"):
        await papers.search("light energy")


async def test_closing_twice_or_before_entering_is_a_no_op(two_db, open_log):
    client = HaikuRAG(config=two_db)
    await client.aclose()  # before entering: nothing to close, and the client still opens
    assert not client.is_closed and open_log == []
    async with client:
        store = (await client.reader_for("papers")).store
        assert not client.is_closed and not store.closed
    assert client.is_closed and store.closed  # leaving closes every database it opened
    await client.aclose()  # again: nothing left to close
    assert client.is_closed and open_log == ["papers"]


async def test_a_legacy_uri_database_is_unnamed_and_its_results_carry_no_source(built, tmp_path):
    from rag_support import config_data

    from haiku.core.config import config_from_dict

    data = config_data(tmp_path / "data")
    data["lancedb"] = {"uri": str(built["wiki"])}
    async with HaikuRAG(config=config_from_dict(data), read_only=True) as client:
        assert client.source_names == () and client.source is None and not client.covers_multiple
        results = await client.search("pasta in salted water", limit=2)
        documents = await client.list_documents()
        document = await client.get_document_by_id(documents[0].id)
    assert results and all(r.source is None for r in results)
    assert documents and all(d.source is None for d in documents)
    assert document is not None and document.source is None


@pytest.mark.parametrize("query", ["", "   \n"])
async def test_an_empty_or_blank_query_raises_value_error_and_opens_nothing(two_db, open_log, query):
    async with HaikuRAG(config=two_db) as client:
        with pytest.raises(ValueError, match="empty"):
            await client.search(query)
        with pytest.raises(ValueError, match="empty"):
            await ask(client, query)
    assert open_log == []


@pytest.mark.parametrize("bad", ["content = 'x'", "bogus = 1", "title = 'x' AND"])
async def test_a_bad_filter_is_refused_before_any_database_opens_naming_the_document_fields(two_db, open_log, bad):
    async with HaikuRAG(config=two_db) as client:
        for call in (lambda: client.search("data", filter=bad), lambda: client.list_documents(filter=bad)):
            with pytest.raises(ValueError) as caught:
                await call()
            message = str(caught.value)
            assert message.startswith(f"invalid document filter {bad!r}: ")
            assert message.endswith("over the document fields id, uri, title, metadata, created_at, updated_at")
            assert ".." not in message and "database" not in message and "Valid fields" not in message
    assert open_log == []
