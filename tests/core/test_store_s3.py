"""A database on object storage (a local moto S3 server): created, written, searched and tagged (docs/configuration.md, docs/storage.md)."""

from __future__ import annotations

import pytest

from haiku.core.errors import SourceUnavailableError
from haiku.core.scope import DatabaseScope
from haiku.core.store import Store


async def test_missing_s3_database_raises_source_unavailable_without_the_uri(s3_config):
    config = s3_config("remote")
    ref = DatabaseScope.resolve(config).databases[0]
    assert isinstance(ref.location, str) and ref.location.startswith("s3://")
    assert not await Store.exists(ref, config)
    with pytest.raises(SourceUnavailableError) as caught:
        await Store.open(ref, config, read_only=True)
    assert "'remote'" in str(caught.value) and "s3://" not in str(caught.value)
    assert not await Store.exists(ref, config)


async def test_s3_database_is_created_written_searched_tagged_and_vacuumed(s3_config, write_doc, fake_embed):
    config = s3_config("remote")
    ref = DatabaseScope.resolve(config).databases[0]
    store = await Store.open(ref, config, create=True)
    try:
        assert store.created and store.location == ref.location
        await write_doc(store, "file:///a.md", "clouds hold water vapour", title="Weather")
        await store.tags.create_tag("r1")
        await write_doc(store, "file:///b.md", "rivers flow to the sea", title="Rivers")
        hits = await store.search("water", query_vector=fake_embed("water"), search_type="hybrid", limit=2)
        assert hits[0].document_title == "Weather" and hits[0].source == "remote"
        assert await store.vacuum(retention_seconds=0) is not None
    finally:
        await store.close()

    snapshot = await Store.open(ref, config, tag="r1")
    try:
        assert snapshot.read_only
        assert [d.title for d in await snapshot.reads.list_documents()] == ["Weather"]
        fts = await snapshot.search("clouds", search_type="fts")
        assert [r.content for r in fts] == ["clouds hold water vapour"]
    finally:
        await snapshot.close()

    live = await Store.open(ref, config, read_only=True)
    try:
        assert await live.reads.count_documents() == 2
    finally:
        await live.close()
