"""Database selection: DatabaseRef and DatabaseScope (docs/client.md)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from haiku.core.errors import AmbiguousDatabaseError, TagError, UnknownDatabaseError
from haiku.core.scope import DatabaseRef, DatabaseScope


@pytest.fixture
def two_db(make_config, tmp_path: Path):
    return make_config(
        lancedb={"databases": {"a": str(tmp_path / "a.lancedb"), "b": "s3://bucket/b.lancedb"}}
    )


@pytest.fixture
def nothing_configured(make_config):
    return make_config()


# --- resolve (docs/client.md) --------------------------------------------------------------------------


def test_resolve_with_no_databases_is_one_ref_named_haiku_rag_at_data_dir(nothing_configured):
    (ref,) = DatabaseScope.resolve(nothing_configured).databases
    assert ref.name == "haiku.rag"
    assert ref.location == Path(nothing_configured.storage.data_dir) / "haiku.rag.lancedb"
    assert (ref.given, ref.tag) == (False, None)


def test_resolve_returns_configured_names_in_order_with_uri_as_str_and_path_as_path(make_config):
    config = make_config(lancedb={"databases": {"papers": "s3://b/p.lancedb", "notes": "./n.lancedb"}})
    scope = DatabaseScope.resolve(config)
    assert scope.names == ("papers", "notes")
    papers, notes = scope.databases
    assert papers.location == "s3://b/p.lancedb" and isinstance(papers.location, str)
    assert notes.location == Path("n.lancedb") and isinstance(notes.location, Path)


def test_resolve_keeps_relative_paths_relative_to_the_working_directory(make_config):
    config = make_config(lancedb={"databases": {"notes": "data/n.lancedb"}})
    (notes,) = DatabaseScope.resolve(config).databases
    assert notes.location == Path("data/n.lancedb")
    assert not notes.location.is_absolute()


def test_resolve_unknown_name_raises_unknown_database_error_a_keyerror_with_unquoted_str(two_db):
    with pytest.raises(UnknownDatabaseError) as info:
        DatabaseScope.resolve(two_db, database_name="nope")
    error = info.value
    assert isinstance(error, KeyError)
    assert "nope" in str(error)
    assert not str(error).startswith(("'", '"'))
    assert str(error) == "unknown database 'nope'; the databases are a, b"


def test_unknown_database_error_from_resolve_never_contains_a_location(two_db, tmp_path: Path):
    with pytest.raises(UnknownDatabaseError) as info:
        DatabaseScope.resolve(two_db, database_name="nope")
    assert str(tmp_path) not in str(info.value)
    assert "s3://" not in str(info.value)


def test_resolve_with_a_name_and_a_path_raises_ambiguous_database_error(two_db):
    with pytest.raises(AmbiguousDatabaseError, match="pass one of them"):
        DatabaseScope.resolve(two_db, database_name="a", database_path="x.lancedb")


def test_resolve_with_a_name_and_a_path_is_ambiguous_even_with_nothing_configured(nothing_configured):
    with pytest.raises(AmbiguousDatabaseError):
        DatabaseScope.resolve(nothing_configured, database_name="a", database_path="x.lancedb")


def test_resolve_with_a_path_beside_configured_databases_raises_ambiguous_database_error(two_db):
    with pytest.raises(AmbiguousDatabaseError) as info:
        DatabaseScope.resolve(two_db, database_path="x.lancedb")
    message = str(info.value)
    assert "x.lancedb" in message
    assert "a, b" in message


def test_resolve_with_a_path_and_nothing_configured_is_that_path_named_by_its_stem(nothing_configured):
    (ref,) = DatabaseScope.resolve(nothing_configured, database_path="/tmp/x/foo.lancedb").databases
    assert (ref.name, ref.location, ref.given) == ("foo", Path("/tmp/x/foo.lancedb"), True)


def test_resolve_selects_the_one_ref_named(two_db):
    scope = DatabaseScope.resolve(two_db, database_name="b")
    assert scope.names == ("b",)
    assert scope.databases[0].location == "s3://bucket/b.lancedb"


def test_resolve_selects_haiku_rag_by_name_when_nothing_is_configured(nothing_configured):
    assert DatabaseScope.resolve(nothing_configured, database_name="haiku.rag").names == ("haiku.rag",)


def test_resolve_selects_a_tagged_entry_with_its_tag(make_config):
    config = make_config(lancedb={"databases": {"snap": {"location": "/p.lancedb", "tag": "r1"}}})
    (ref,) = DatabaseScope.resolve(config, database_name="snap").databases
    assert ref.tag == "r1"


def test_uri_only_config_resolves_to_one_unnamed_database(make_config):
    """The scope side of statement 6: a `lancedb.uri` database has no name (so `source is None`)."""
    config = make_config(lancedb={"uri": "s3://bucket/legacy.lancedb"})
    (ref,) = DatabaseScope.resolve(config).databases
    assert ref.name is None
    assert ref.location == "s3://bucket/legacy.lancedb"
    assert DatabaseScope.resolve(config).names == (None,)


def test_uri_only_local_config_resolves_to_a_path(make_config):
    (ref,) = DatabaseScope.resolve(make_config(lancedb={"uri": "legacy.lancedb"})).databases
    assert ref.location == Path("legacy.lancedb")


def test_resolve_by_name_on_a_uri_only_config_raises_unknown_database_error(make_config):
    with pytest.raises(UnknownDatabaseError, match="nope"):
        DatabaseScope.resolve(make_config(lancedb={"uri": "/legacy.lancedb"}), database_name="nope")


def test_resolve_opens_nothing(make_config, tmp_path: Path):
    config = make_config(lancedb={"databases": {"a": str(tmp_path / "never" / "a.lancedb")}})
    DatabaseScope.resolve(config)
    DatabaseScope.resolve(config, database_name="a")
    assert not (tmp_path / "never").exists()
    assert not Path(config.storage.data_dir).exists()


def test_resolve_reads_no_environment(nothing_configured, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    before = DatabaseScope.resolve(nothing_configured)
    monkeypatch.setenv("HOME", str(tmp_path / "another-home"))
    monkeypatch.setenv("HAIKU_RAG_CONFIG_PATH", str(tmp_path / "other.yaml"))
    assert DatabaseScope.resolve(nothing_configured) == before


# --- DatabaseRef (docs/client.md) ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["", "   "])
def test_ref_with_a_blank_name_raises_value_error(name: str):
    with pytest.raises(ValueError):
        DatabaseRef(name=name, location="/x.lancedb")


def test_ref_with_no_name_is_the_legacy_unnamed_database():
    assert DatabaseRef(name=None, location="/x.lancedb").name is None


def test_ref_string_location_without_scheme_becomes_a_path():
    assert DatabaseRef.configured("a", "rel/a.lancedb").location == Path("rel/a.lancedb")


@pytest.mark.parametrize("uri", ["s3://b/a.lancedb", "gs://b/a", "az://c/a", "memory://x"])
def test_ref_location_with_scheme_stays_a_string(uri: str):
    assert DatabaseRef.configured("a", uri).location == uri


def test_ref_at_path_is_given_and_named_by_its_stem():
    ref = DatabaseRef.at("/data/x/papers.lancedb")
    assert (ref.name, ref.location, ref.given, ref.tag) == (
        "papers",
        Path("/data/x/papers.lancedb"),
        True,
        None,
    )


def test_ref_at_a_path_with_no_stem_raises_value_error():
    with pytest.raises(ValueError, match="no name"):
        DatabaseRef.at("/")


def test_given_ref_location_is_always_a_path():
    assert isinstance(DatabaseRef(name="x", location="x.lancedb", given=True).location, Path)
    with pytest.raises(ValueError):
        DatabaseRef(name="x", location="s3://b/x.lancedb", given=True)


def test_configured_ref_is_not_given_and_keeps_its_tag():
    ref = DatabaseRef.configured("snap", "/p.lancedb", tag="r1")
    assert (ref.given, ref.tag) == (False, "r1")


def test_ref_db_path_is_the_path_or_none_for_a_uri():
    assert DatabaseRef.configured("a", "/a.lancedb").db_path == Path("/a.lancedb")
    assert DatabaseRef.configured("b", "s3://b/b.lancedb").db_path is None


def test_ref_at_tag_is_a_copy_at_that_tag():
    ref = DatabaseRef.configured("a", "/a.lancedb")
    tagged = ref.at_tag("r1")
    assert (tagged.name, tagged.location, tagged.tag, ref.tag) == ("a", Path("/a.lancedb"), "r1", None)


def test_ref_at_tag_on_a_tagged_ref_raises_ambiguous_database_error_naming_both_tags():
    ref = DatabaseRef.configured("snap", "/p.lancedb", tag="T")
    with pytest.raises(AmbiguousDatabaseError) as info:
        ref.at_tag("U")
    assert "configured at tag 'T' and takes no other; drop the tag 'U'" in str(info.value)


def test_ref_is_frozen():
    ref = DatabaseRef.configured("a", "/a.lancedb")
    with pytest.raises(dataclasses.FrozenInstanceError):
        ref.name = "b"  # type: ignore[misc]


# --- DatabaseScope (docs/client.md) ----------------------------------------------------------------------


def test_scope_is_never_empty():
    with pytest.raises(ValueError):
        DatabaseScope(())


def test_scope_names_and_covers_multiple(two_db):
    scope = DatabaseScope.resolve(two_db)
    assert scope.names == ("a", "b")
    assert scope.covers_multiple is True
    assert DatabaseScope.resolve(two_db, database_name="a").covers_multiple is False


def test_scope_at_path_is_the_scope_of_ref_at_path():
    assert DatabaseScope.at("/x/foo.lancedb").databases == (DatabaseRef.at("/x/foo.lancedb"),)


def test_scope_is_frozen_and_hashable(two_db):
    scope = DatabaseScope.resolve(two_db)
    assert hash(scope) == hash(DatabaseScope.resolve(two_db))
    with pytest.raises(dataclasses.FrozenInstanceError):
        scope.databases = ()  # type: ignore[misc]


def test_select_returns_the_named_refs_in_the_order_given_with_duplicates_collapsed(two_db):
    assert DatabaseScope.resolve(two_db).select(["b", "a", "b"]).names == ("b", "a")


def test_select_nothing_raises_value_error_pointing_to_none():
    scope = DatabaseScope((DatabaseRef.configured("a", "/a"),))
    with pytest.raises(ValueError, match=r"sources=\[\] selects no database; pass None for all of them"):
        scope.select([])


def test_select_unknown_names_raises_unknown_database_error_listing_them_and_the_configured(two_db):
    with pytest.raises(UnknownDatabaseError) as info:
        DatabaseScope.resolve(two_db).select(["x", "a", "y"])
    assert str(info.value) == "unknown database(s) x, y; configured: a, b"


def test_select_refuses_a_bare_string(two_db):
    with pytest.raises(TypeError, match="list"):
        DatabaseScope.resolve(two_db).select("a")  # type: ignore[arg-type]


def test_refuse_tags_raises_tag_error_naming_the_tagged_entry(make_config):
    config = make_config(
        lancedb={"databases": {"live": "/p.lancedb", "snap": {"location": "/p.lancedb", "tag": "r1"}}}
    )
    with pytest.raises(TagError) as info:
        DatabaseScope.resolve(config).refuse_tags("vacuum rewrites")
    assert str(info.value) == (
        "database 'snap' is configured at tag 'r1', and vacuum rewrites the live database; "
        "select an entry without a tag"
    )


def test_refuse_tags_accepts_live_entries(two_db):
    DatabaseScope.resolve(two_db).refuse_tags("vacuum rewrites")
