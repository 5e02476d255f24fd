"""Configuration loading and validation (docs/configuration.md)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from haiku.core.config import (
    AppConfig,
    config_from_dict,
    find_config_file,
    load_config,
    platform_data_dir,
)
from haiku.core.config.models import DEFAULT_IGNORE_PATTERNS, DEFAULT_INCLUDE_PATTERNS
from haiku.core.errors import InvalidConfigError, MissingEnvVarError

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory and home of its own, and no config or test variables.

    ``.env`` loading writes ``os.environ`` directly, so the whole environment
    is restored after each test.
    """
    saved = dict(os.environ)
    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    for name in list(os.environ):
        if name.startswith(("HAIKU_", "HKT_")):
            monkeypatch.delenv(name)
    yield work
    os.environ.clear()
    os.environ.update(saved)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def load_error(data: dict) -> str:
    with pytest.raises(InvalidConfigError) as info:
        config_from_dict(data)
    return str(info.value)


# --- lookup order (docs/configuration.md) ------------------------------------------------------------------


def test_nothing_found_means_all_defaults():
    config = load_config()
    assert config.config_path is None
    assert config.model_dump() == AppConfig().model_dump()


def test_explicit_path_that_does_not_exist_fails_with_config_file_not_found(isolated: Path):
    missing = isolated / "nope.yaml"
    with pytest.raises(InvalidConfigError, match=r"Config file not found: .*nope\.yaml"):
        load_config(missing)


def test_explicit_path_wins_over_env_var(isolated: Path, monkeypatch: pytest.MonkeyPatch):
    explicit = write(isolated / "explicit.yaml", "search: {limit: 1}\n")
    from_env = write(isolated / "env.yaml", "search: {limit: 2}\n")
    monkeypatch.setenv("HAIKU_RAG_CONFIG_PATH", str(from_env))
    assert load_config(explicit).search.limit == 1


def test_env_var_wins_over_working_directory_file(isolated: Path, monkeypatch: pytest.MonkeyPatch):
    write(isolated / "haiku.rag.yaml", "search: {limit: 3}\n")
    from_env = write(isolated / "elsewhere" / "cfg.yaml", "search: {limit: 2}\n")
    monkeypatch.setenv("HAIKU_RAG_CONFIG_PATH", str(from_env))
    assert load_config().search.limit == 2


def test_env_var_naming_a_missing_file_is_an_error(isolated: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HAIKU_RAG_CONFIG_PATH", str(isolated / "gone.yaml"))
    with pytest.raises(InvalidConfigError, match=r"Config file not found: .*gone\.yaml"):
        load_config()


def test_working_directory_file_wins_over_data_dir_file(isolated: Path):
    write(platform_data_dir() / "haiku.rag.yaml", "search: {limit: 4}\n")
    write(isolated / "haiku.rag.yaml", "search: {limit: 3}\n")
    assert load_config().search.limit == 3


def test_data_dir_file_is_found_last():
    found = write(platform_data_dir() / "haiku.rag.yaml", "search: {limit: 4}\n")
    assert find_config_file() == found
    assert load_config().search.limit == 4


def test_loaded_config_remembers_its_file(isolated: Path):
    path = write(isolated / "haiku.rag.yaml", "search: {limit: 3}\n")
    assert load_config().config_path == path


def test_config_path_is_not_a_config_key():
    assert "unknown key 'config_path'" in load_error({"config_path": "/x.yaml"})


def test_empty_file_means_all_defaults(isolated: Path):
    path = write(isolated / "haiku.rag.yaml", "")
    config = load_config()
    assert config.config_path == path
    assert config.search.limit == 5


def test_file_that_is_not_a_mapping_fails_naming_the_file(isolated: Path):
    path = write(isolated / "list.yaml", "- a\n- b\n")
    with pytest.raises(InvalidConfigError, match=r"list\.yaml"):
        load_config(path)


def test_unparseable_yaml_fails_naming_the_file(isolated: Path):
    path = write(isolated / "broken.yaml", "search: {limit: [\n")
    with pytest.raises(InvalidConfigError, match=r"broken\.yaml"):
        load_config(path)


@pytest.mark.parametrize("line", ["lancedb: {databases: {papers: ${HKT_DIR}/papers.lancedb}}\n", "x: [${HKT_DIR}/a, b]\n"])
def test_an_unquoted_variable_in_a_flow_mapping_or_list_fails_saying_to_quote_it(isolated: Path, line: str):
    path = write(isolated / "flow.yaml", line)
    with pytest.raises(InvalidConfigError, match=r"flow\.yaml(.|\n)*inside a YAML flow mapping or list .* must be quoted"):
        load_config(path)


def test_a_parse_error_elsewhere_gets_no_quoting_hint(isolated: Path):
    path = write(isolated / "broken.yaml", "search: {limit: [\n")
    with pytest.raises(InvalidConfigError) as raised:
        load_config(path)
    assert "must be quoted" not in str(raised.value)


def test_validation_failure_names_the_file(isolated: Path):
    path = write(isolated / "bad.yaml", "search: {limit: 0}\n")
    with pytest.raises(InvalidConfigError, match=r"bad\.yaml.*search\.limit"):
        load_config(path)


# --- .env (docs/configuration.md) -----------------------------------------------------------------------------


def test_dotenv_in_working_directory_feeds_variable_expansion(isolated: Path):
    write(isolated / ".env", "HKT_LIMIT=7\n")
    write(isolated / "haiku.rag.yaml", "search: {limit: '${HKT_LIMIT}'}\n")
    assert load_config().search.limit == 7


def test_dotenv_never_overrides_a_variable_already_set(isolated: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HKT_LIMIT", "2")
    write(isolated / ".env", "HKT_LIMIT=7\n")
    write(isolated / "haiku.rag.yaml", "search: {limit: '${HKT_LIMIT}'}\n")
    assert load_config().search.limit == 2


def test_dotenv_may_name_the_config_file(isolated: Path):
    target = write(isolated / "conf" / "mine.yaml", "search: {limit: 9}\n")
    write(isolated / ".env", f"HAIKU_RAG_CONFIG_PATH={target}\n")
    assert load_config().search.limit == 9


def test_dotenv_reads_quotes_comments_and_export(isolated: Path):
    write(
        isolated / ".env",
        "# a comment\n"
        "export HKT_A=plain # trailing comment\n"
        "HKT_B=\"double # kept\"\n"
        "HKT_C='single'\n"
        "not a line\n",
    )
    load_config()
    assert (os.environ["HKT_A"], os.environ["HKT_B"], os.environ["HKT_C"]) == (
        "plain",
        "double # kept",
        "single",
    )


# --- variable expansion (docs/configuration.md) ----------------------------------------------------


def test_var_expands_in_a_string_value(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HKT_HOST", "gpu-box")
    config = config_from_dict({"qa": {"model": {"base_url": "http://${HKT_HOST}:11434/v1"}}})
    assert config.qa.model.base_url == "http://gpu-box:11434/v1"


def test_var_with_default_falls_back_to_the_default_when_unset():
    config = config_from_dict({"qa": {"model": {"name": "${HKT_UNSET:-qwen3:8b}"}}})
    assert config.qa.model.name == "qwen3:8b"


def test_var_with_default_uses_the_variable_when_set(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HKT_MODEL", "llama")
    config = config_from_dict({"qa": {"model": {"name": "${HKT_MODEL:-qwen3}"}}})
    assert config.qa.model.name == "llama"


def test_double_dollar_yields_a_literal_dollar(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HKT_X", "expanded")
    config = config_from_dict({"qa": {"model": {"api_key": "pa$$word-$${HKT_X}"}}})
    assert config.qa.model.api_key == "pa$word-${HKT_X}"


def test_unset_var_raises_missing_env_var_error_naming_it():
    with pytest.raises(MissingEnvVarError, match="HKT_NOT_SET") as info:
        config_from_dict({"qa": {"model": {"api_key": "${HKT_NOT_SET}"}}})
    assert info.value.var == "HKT_NOT_SET"


def test_missing_env_var_error_is_a_value_error_naming_the_key():
    with pytest.raises(ValueError, match=r"qa\.model\.api_key"):
        config_from_dict({"qa": {"model": {"api_key": "${HKT_NOT_SET}"}}})


def test_empty_var_without_default_raises_missing_env_var_error(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HKT_EMPTY", "")
    with pytest.raises(MissingEnvVarError, match="HKT_EMPTY"):
        config_from_dict({"qa": {"model": {"api_key": "${HKT_EMPTY}"}}})


def test_empty_var_with_default_falls_back_to_the_default(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HKT_EMPTY", "")
    config = config_from_dict({"qa": {"model": {"name": "${HKT_EMPTY:-fallback}"}}})
    assert config.qa.model.name == "fallback"


def test_unset_var_in_a_loaded_file_names_the_file(isolated: Path):
    path = write(isolated / "haiku.rag.yaml", "qa: {model: {api_key: '${HKT_NOT_SET}'}}\n")
    with pytest.raises(MissingEnvVarError, match=re.escape(str(path))):
        load_config()


def test_config_dir_var_expands_to_the_directory_holding_the_file(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("HAIKU_RAG_CONFIG_DIR", "/somewhere/else")
    path = write(
        isolated / "deploy" / "haiku.rag.yaml",
        "lancedb:\n  databases:\n    papers: ${HAIKU_RAG_CONFIG_DIR}/papers.lancedb\n",
    )
    config = load_config(path)
    assert config.lancedb.databases["papers"].location == f"{path.parent.resolve()}/papers.lancedb"


def test_vars_expand_inside_database_entries(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HKT_ROOT", "/srv/docs")
    config = config_from_dict(
        {"lancedb": {"databases": {"a": {"location": "${HKT_ROOT}/a.lancedb", "tag": "${HKT_TAG:-r1}"}}}}
    )
    entry = config.lancedb.databases["a"]
    assert (entry.location, entry.tag) == ("/srv/docs/a.lancedb", "r1")


def test_vars_expand_inside_lists(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HKT_ROOT", "/srv/docs")
    config = config_from_dict(
        {
            "lancedb": {"databases": {"a": "/a.lancedb"}},
            "ingester": {"databases": {"a": {"sources": [{"type": "fs", "root": "${HKT_ROOT}/a"}]}}},
        }
    )
    assert config.ingester.databases["a"].sources[0].root == Path("/srv/docs/a")


def test_expanded_number_is_validated_as_a_number(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HKT_WORKERS", "4")
    config = config_from_dict({"ingester": {"workers": {"worker_count": "${HKT_WORKERS}"}}})
    assert config.ingester.workers.worker_count == 4


# --- unknown keys (docs/configuration.md) ----------------------------------------------------------

_DB = {"lancedb": {"databases": {"a": "/tmp/a.lancedb"}}}


def _with_source(**extra: object) -> dict:
    source = {"type": "fs", "root": "/tmp/a", **extra}
    return {**_DB, "ingester": {"databases": {"a": {"sources": [source]}}}}


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"serach": {}}, "serach"),
        ({"storage": {"datadir": "/x"}}, "datadir"),
        ({"lancedb": {"urii": "/x"}}, "urii"),
        ({"embeddings": {"batchsize": 3}}, "batchsize"),
        ({"embeddings": {"model": {"dims": 3}}}, "dims"),
        ({"reranking": {"modle": None}}, "modle"),
        ({"reranking": {"model": {"provider": "http", "name": "r", "url": "x"}}}, "url"),
        ({"search": {"limitt": 3}}, "limitt"),
        ({"qa": {"requests": 3}}, "requests"),
        ({"qa": {"model": {"temperature": 0}}}, "temperature"),
        ({"sandbox": {"timeout": 3}}, "timeout"),
        ({"processing": {"chunksize": 3}}, "chunksize"),
        ({"ingester": {"worker": {}}}, "worker"),
        ({"ingester": {"queue": {"file": "/x"}}}, "file"),
        ({"ingester": {"workers": {"lease": 3}}}, "lease"),
        ({"ingester": {"workers": {"retry": {"attempts": 3}}}}, "attempts"),
        ({**_DB, "ingester": {"databases": {"a": {"sources": [], "watch": True}}}}, "watch"),
        (_with_source(recursive=True), "recursive"),
        (_with_source(retry={"tries": 2}), "tries"),
        ({"lancedb": {"databases": {"a": {"location": "/x", "tag": "t", "extra": 1}}}}, "extra"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_unknown_key_anywhere_fails_to_load_naming_the_key(data: dict, key: str):
    assert f"{key}" in load_error(data)


def test_unknown_key_message_names_the_section_and_the_valid_keys():
    message = load_error({"search": {"limitt": 3}})
    assert "search: unknown key 'limitt'" in message
    assert "limit, " in message


def test_unknown_key_in_a_source_names_its_database_entry():
    assert "ingester.databases[a].sources[0]: unknown key 'recursive'" in load_error(
        _with_source(recursive=True)
    )


# --- storage (docs/configuration.md) --------------------------------------------------------------------------


@pytest.mark.skipif(sys.platform != "linux", reason="the Linux platform directory")
def test_platform_data_dir_on_linux_is_local_share_haiku_rag(isolated: Path):
    assert platform_data_dir() == Path(os.environ["HOME"]) / ".local" / "share" / "haiku.rag"


def test_data_dir_defaults_to_the_platform_data_dir():
    assert AppConfig().storage.data_dir == platform_data_dir()


@pytest.mark.parametrize("blank", ["", "   ", None])
def test_blank_data_dir_means_the_platform_default_never_the_working_directory(blank: str | None):
    config = config_from_dict({"storage": {"data_dir": blank}})
    assert config.data_dir == platform_data_dir()
    assert config.data_dir.is_absolute()


def test_storage_defaults():
    storage = AppConfig().storage
    assert (storage.auto_vacuum, storage.vacuum_retention_seconds, storage.writer_lock_timeout_s) == (
        True,
        86400,
        60.0,
    )


@pytest.mark.parametrize(
    "section",
    [{"vacuum_retention_seconds": -1}, {"writer_lock_timeout_s": 0}],
    ids=["negative-retention", "zero-lock-timeout"],
)
def test_storage_limits_are_enforced(section: dict):
    assert "storage." in load_error({"storage": section})


def test_data_dir_expands_the_home_directory(isolated: Path):
    config = config_from_dict({"storage": {"data_dir": "~/haiku-data"}})
    assert config.data_dir == Path(os.environ["HOME"]) / "haiku-data"


# --- lancedb (docs/configuration.md) ---------------------------------------------------------


def test_databases_keep_their_configured_order():
    config = config_from_dict({"lancedb": {"databases": {"zeta": "/z", "alpha": "/a", "mid": "/m"}}})
    assert list(config.lancedb.databases) == ["zeta", "alpha", "mid"]


def test_short_and_long_database_entries_load_alike():
    config = config_from_dict(
        {"lancedb": {"databases": {"a": "/a.lancedb", "b": {"location": "/b.lancedb", "tag": "r1"}}}}
    )
    a, b = config.lancedb.databases["a"], config.lancedb.databases["b"]
    assert (a.location, a.tag, b.location, b.tag) == ("/a.lancedb", None, "/b.lancedb", "r1")


def test_entries_may_share_a_location_at_different_tags():
    config = config_from_dict(
        {
            "lancedb": {
                "databases": {
                    "live": "/p.lancedb",
                    "r1": {"location": "/p.lancedb", "tag": "r1"},
                    "r2": {"location": "/p.lancedb", "tag": "r2"},
                }
            }
        }
    )
    assert [e.tag for e in config.lancedb.databases.values()] == [None, "r1", "r2"]


def test_tag_that_yaml_reads_as_a_date_is_kept_as_text(isolated: Path):
    path = write(
        isolated / "haiku.rag.yaml",
        "lancedb:\n  databases:\n    snap: {location: /p.lancedb, tag: 2026-06-30}\n",
    )
    assert load_config(path).lancedb.databases["snap"].tag == "2026-06-30"


@pytest.mark.parametrize(
    ("databases", "expected"),
    [
        ({"": "/x"}, "lancedb.databases has an entry with no name"),
        ({"   ": "/x"}, "lancedb.databases has an entry with no name"),
        ({"papers": ""}, "lancedb.databases[papers] has no location"),
        ({"papers": "  "}, "lancedb.databases[papers] has no location"),
        ({"papers": None}, "lancedb.databases[papers] has no location"),
        ({"papers": {"location": " ", "tag": "t"}}, "lancedb.databases[papers] has no location"),
        ({"papers": {"location": "/x", "tag": ""}}, "lancedb.databases[papers] has a blank tag"),
        ({"papers": {"location": "/x", "tag": "  "}}, "lancedb.databases[papers] has a blank tag"),
    ],
    ids=["empty-name", "blank-name", "empty-location", "blank-location", "null-location",
         "blank-long-location", "empty-tag", "blank-tag"],
)
def test_database_entry_with_blank_name_location_or_tag_fails_naming_the_entry(
    databases: dict, expected: str
):
    assert expected in load_error({"lancedb": {"databases": databases}})


def test_database_entry_without_location_fails_naming_the_entry():
    assert "lancedb.databases[papers]" in load_error(
        {"lancedb": {"databases": {"papers": {"tag": "r1"}}}}
    )


def test_database_entry_with_unknown_key_fails_naming_the_entry_and_the_key():
    message = load_error({"lancedb": {"databases": {"papers": {"location": "/x", "tagg": "r1"}}}})
    assert "lancedb.databases[papers]" in message
    assert "tagg" in message


def test_uri_and_databases_together_fail_to_load_naming_both_keys():
    message = load_error({"lancedb": {"uri": "/legacy.lancedb", "databases": {"a": "/a.lancedb"}}})
    assert "lancedb.uri" in message
    assert "lancedb.databases" in message


def test_uri_alone_loads():
    assert config_from_dict({"lancedb": {"uri": "s3://bucket/db.lancedb"}}).lancedb.uri == (
        "s3://bucket/db.lancedb"
    )


def test_lancedb_defaults():
    lancedb = AppConfig().lancedb
    assert (lancedb.uri, lancedb.databases, lancedb.storage_options) == (None, {}, {})
    assert lancedb.read_consistency_interval_seconds == 30


def test_read_consistency_interval_may_be_null():
    config = config_from_dict({"lancedb": {"read_consistency_interval_seconds": None}})
    assert config.lancedb.read_consistency_interval_seconds is None


def test_storage_options_written_as_yaml_booleans_and_numbers_become_strings():
    config = config_from_dict(
        {"lancedb": {"storage_options": {"allow_http": True, "timeout": 30, "region": "us-east-1"}}}
    )
    assert config.lancedb.storage_options == {"allow_http": "true", "timeout": "30", "region": "us-east-1"}


# --- embeddings, reranking, search, qa, sandbox, processing (docs/configuration.md) -------------------------


def test_embedding_defaults_are_the_offline_minilm_model():
    embeddings = AppConfig().embeddings
    model = embeddings.model
    assert (model.provider, model.name, model.vector_dim, embeddings.batch_size) == (
        "sentence-transformers",
        "all-MiniLM-L6-v2",
        384,
        64,
    )


def test_openai_compatible_embedder_is_configurable():
    config = config_from_dict(
        {
            "embeddings": {
                "model": {
                    "provider": "openai",
                    "name": "nomic-embed-text",
                    "vector_dim": 768,
                    "base_url": "http://localhost:11434/v1",
                    "api_key": "k",
                }
            }
        }
    )
    assert config.embeddings.model.provider == "openai"


@pytest.mark.parametrize(
    "model",
    [{"provider": "cohere"}, {"vector_dim": 0}],
    ids=["unknown-provider", "zero-dim"],
)
def test_invalid_embedding_model_fails(model: dict):
    assert "embeddings.model." in load_error({"embeddings": {"model": model}})


def test_reranking_defaults_to_no_reranker():
    assert AppConfig().reranking.model is None


@pytest.mark.parametrize("provider", ["cross-encoder", "http"])
def test_reranker_providers_load(provider: str):
    config = config_from_dict({"reranking": {"model": {"provider": provider, "name": "r"}}})
    assert config.reranking.model is not None and config.reranking.model.provider == provider


def test_other_reranker_provider_fails_to_load_listing_the_supported_ones():
    message = load_error({"reranking": {"model": {"provider": "cohere", "name": "r"}}})
    assert "cross-encoder" in message and "http" in message


def test_search_defaults():
    search = AppConfig().search
    assert (
        search.limit,
        search.rerank_pool_factor,
        search.max_context_chars,
        search.vector_index_metric,
        search.vector_nprobes,
        search.vector_refine_factor,
    ) == (5, 10, 5000, "cosine", 40, 50)


def test_vector_index_metric_other_than_cosine_or_l2_fails():
    assert "search.vector_index_metric" in load_error({"search": {"vector_index_metric": "dot"}})


def test_qa_sandbox_and_processing_defaults():
    config = AppConfig()
    assert (config.qa.model.provider, config.qa.model.base_url, config.qa.request_limit) == (
        "openai",
        "http://localhost:11434/v1",
        30,
    )
    assert (config.sandbox.timeout_s, config.sandbox.max_output_chars) == (30, 20000)
    assert (config.processing.chunk_size, config.processing.conversion_timeout_s) == (256, 300)


# --- ingester (docs/configuration.md) -------------------------------------------------------


def _ingest(name: str, databases: dict | None = None, uri: str | None = None) -> dict:
    lancedb: dict = {}
    if databases is not None:
        lancedb["databases"] = databases
    if uri is not None:
        lancedb["uri"] = uri
    return {
        "lancedb": lancedb,
        "ingester": {"databases": {name: {"sources": [{"type": "fs", "root": "/srv/docs"}]}}},
    }


def test_ingester_database_absent_from_lancedb_databases_fails_naming_it_and_the_configured_ones():
    message = load_error(_ingest("nope", {"a": "/a.lancedb", "b": "/b.lancedb"}))
    assert "ingester.databases[nope] names no database in lancedb.databases, which names a, b" in message


def test_ingester_database_configured_at_a_tag_fails_naming_it_and_the_tag():
    message = load_error(_ingest("snap", {"snap": {"location": "/p.lancedb", "tag": "r1"}}))
    assert "ingester.databases[snap] names a database configured at tag 'r1'" in message
    assert "live database" in message


def test_ingester_naming_haiku_rag_with_nothing_configured_loads():
    config = config_from_dict(_ingest("haiku.rag"))
    assert list(config.ingester.databases) == ["haiku.rag"]


def test_ingester_naming_another_database_with_nothing_configured_fails_naming_haiku_rag():
    message = load_error(_ingest("papers"))
    assert "ingester.databases[papers] names no configured database" in message
    assert "the only one is haiku.rag" in message


def test_ingester_databases_with_legacy_uri_fail_saying_to_move_it_into_databases():
    message = load_error(_ingest("haiku.rag", uri="/legacy.lancedb"))
    assert "ingester.databases[haiku.rag]" in message
    assert "lancedb.databases" in message


@pytest.mark.parametrize("entry", [{"sources": []}, {}, None])
def test_an_ingester_database_may_have_no_sources_being_fed_only_by_add(entry):
    config = config_from_dict({**_DB, "ingester": {"databases": {"a": entry}}})
    assert config.ingester.databases["a"].sources == []


def test_an_unknown_source_type_fails_to_load_listing_the_supported_types():
    data = {**_DB, "ingester": {"databases": {"a": {"sources": [{"type": "ftp", "root": "b"}]}}}}
    message = load_error(data)
    assert "ingester.databases[a].sources" in message
    assert "'ftp'" in message
    assert "supported types: fs, s3" in message


def test_an_s3_source_takes_a_location_and_storage_options_and_no_watch():
    from haiku.core.config import S3SourceConfig, config_from_dict

    source = {"type": "s3", "location": "s3://bucket/docs/", "storage_options": {"allow_http": True}}
    config = config_from_dict({**_DB, "ingester": {"databases": {"a": {"sources": [source]}}}})
    [loaded] = config.ingester.databases["a"].sources
    assert isinstance(loaded, S3SourceConfig)
    assert (loaded.source_id, loaded.storage_options, loaded.watch) == ("s3://bucket/docs", {"allow_http": "true"}, False)
    bad = {"type": "s3", "location": "bucket/docs"}
    assert "ingester.databases[a].sources[0].location: an s3 source's location is s3://BUCKET[/PREFIX]" in load_error(
        {**_DB, "ingester": {"databases": {"a": {"sources": [bad]}}}}
    )
    watched = {"type": "s3", "location": "s3://bucket", "watch": True}
    assert "ingester.databases[a].sources[0].watch" in load_error(
        {**_DB, "ingester": {"databases": {"a": {"sources": [watched]}}}}
    )


def test_the_engine_is_local_by_default_and_ray_takes_its_keys():
    from haiku.core.config import config_from_dict

    assert config_from_dict(_DB).ingester.engine.type == "local"
    engine = {"type": "ray", "address": "ray://head:10001", "embedders": 2, "gpus_per_embedder": 1}
    loaded = config_from_dict({**_DB, "ingester": {"engine": engine}}).ingester.engine
    assert (loaded.address, loaded.embedders, loaded.converters, loaded.max_task_retries) == ("ray://head:10001", 2, 2, 3)
    assert "ingester.engine" in load_error({**_DB, "ingester": {"engine": {"type": "spark"}}})
    assert "unknown key 'converters'" in load_error({**_DB, "ingester": {"engine": {"type": "local", "converters": 2}}})


def test_fs_source_without_root_fails_naming_the_source():
    data = {**_DB, "ingester": {"databases": {"a": {"sources": [{"type": "fs"}]}}}}
    assert "ingester.databases[a].sources[0].root" in load_error(data)


def test_fs_source_defaults():
    config = config_from_dict(_with_source())
    source = config.ingester.databases["a"].sources[0]
    assert (source.watch, source.poll_interval_s, source.delete_orphans, source.max_file_size) == (
        True,
        300,
        True,
        100 * 1024 * 1024,
    )
    assert source.retry is None


def test_fs_source_includes_the_supported_extensions_by_default():
    source = config_from_dict(_with_source()).ingester.databases["a"].sources[0]
    from haiku.core.convert.formats import FORMATS

    extensions = {"." + pattern.rsplit(".", 1)[-1] for pattern in source.include_patterns if pattern != "*"}
    assert extensions == set(FORMATS) | {".gz", ".bz2", ".xz"}
    assert "*" in source.include_patterns  # names without an extension, taken by their content
    assert {".md", ".txt", ".docx", ".pdf", ".pptx", ".xlsx", ".csv", ".py", ".png"} <= extensions
    assert source.include_patterns == DEFAULT_INCLUDE_PATTERNS


def test_fs_source_ignores_hidden_office_lock_temporary_and_swap_files_by_default():
    source = config_from_dict(_with_source()).ingester.databases["a"].sources[0]
    assert source.ignore_patterns == DEFAULT_IGNORE_PATTERNS
    assert {".*", "**/.*/**", "~$*", "*.tmp", "*.swp"} <= set(source.ignore_patterns)


def test_fs_source_id_defaults_to_fs_and_the_absolute_resolved_root(isolated: Path):
    (isolated / "docs").mkdir()
    data = {**_DB, "ingester": {"databases": {"a": {"sources": [{"type": "fs", "root": "docs"}]}}}}
    source = config_from_dict(data).ingester.databases["a"].sources[0]
    assert source.source_id == f"fs:{(isolated / 'docs').resolve()}"


def test_fs_source_id_is_the_configured_one_when_given():
    source = config_from_dict(_with_source(id="papers-folder")).ingester.databases["a"].sources[0]
    assert source.source_id == "papers-folder"


def test_fs_source_retry_overrides_the_worker_policy():
    source = config_from_dict(_with_source(retry={"max_attempts": 1})).ingester.databases["a"].sources[0]
    assert source.retry is not None and source.retry.max_attempts == 1


def test_queue_defaults_to_ingester_db_in_the_data_dir(tmp_path: Path):
    config = config_from_dict({"storage": {"data_dir": str(tmp_path / "d")}})
    assert config.queue_path == tmp_path / "d" / "ingester.db"
    assert config.ingester.queue.retention_days == 30


def test_queue_retention_null_keeps_every_job():
    config = config_from_dict({"ingester": {"queue": {"retention_days": None}}})
    assert config.ingester.queue.retention_days is None


def test_workers_defaults():
    workers = AppConfig().ingester.workers
    assert (
        workers.worker_count,
        workers.lease_ttl_s,
        workers.heartbeat_interval_s,
        workers.reaper_interval_s,
        workers.shutdown_grace_s,
    ) == (2, 120, 30, 60, 60)
    retry = workers.retry
    assert (retry.max_attempts, retry.base_delay_s, retry.max_delay_s, retry.jitter) == (5, 2, 300, 0.25)


def test_heartbeat_longer_than_a_third_of_the_lease_fails():
    message = load_error({"ingester": {"workers": {"lease_ttl_s": 90, "heartbeat_interval_s": 31}}})
    assert "ingester.workers" in message and "heartbeat_interval_s" in message


def test_heartbeat_of_exactly_a_third_of_the_lease_loads():
    config = config_from_dict({"ingester": {"workers": {"lease_ttl_s": 90, "heartbeat_interval_s": 30}}})
    assert config.ingester.workers.heartbeat_interval_s == 30


def test_retry_max_delay_below_base_delay_fails():
    assert "max_delay_s" in load_error(
        {"ingester": {"workers": {"retry": {"base_delay_s": 10, "max_delay_s": 1}}}}
    )


# --- the shipped example ---------------------------------------------------------------------


def test_example_config_loads(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("HAIKU_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HAIKU_DOCS", str(tmp_path / "docs"))
    config = load_config(REPO_ROOT / "configs" / "haiku.rag.example.yaml")
    assert config.data_dir == tmp_path / "data"
    assert list(config.lancedb.databases) == ["papers", "wiki", "papers-2026-06-30"]
    assert config.lancedb.databases["wiki"].location == f"{tmp_path / 'data'}/wiki.lancedb"
    assert config.lancedb.databases["papers-2026-06-30"].tag == "release-2026-06-30"
    assert list(config.ingester.databases) == ["papers", "wiki"]
    assert config.ingester.databases["wiki"].sources[0].root == tmp_path / "docs" / "wiki"


def test_empty_default_expands_to_an_empty_string():
    config = config_from_dict({"embeddings": {"model": {"api_key": "${HKT_UNSET:-}"}}})
    assert config.embeddings.model.api_key == ""


def test_every_yaml_example_in_the_configuration_docs_loads(monkeypatch: pytest.MonkeyPatch, isolated: Path):
    for name in ("OPENAI_API_KEY", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "x")
    text = (REPO_ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 8
    for number, block in enumerate(blocks):
        load_config(write(isolated / f"example-{number}.yaml", block))


def test_object_storage_opens_and_reads_are_bounded_at_30_s_by_default():
    assert AppConfig().lancedb.object_storage_timeout_s == 30


def test_loading_the_configuration_imports_no_part_of_the_converter():
    import subprocess
    import sys

    code = (
        "import sys, haiku.core.config; "
        "print(sorted(m for m in sys.modules if m.startswith('haiku.core.convert')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout.strip()) == (0, "[]"), done.stderr


def test_the_format_table_is_one_table_read_by_the_configuration_and_the_converter():
    from haiku.core import formats
    from haiku.core.config import FsSourceConfig
    from haiku.core.convert import formats as converter_formats

    assert converter_formats.FORMATS is formats.FORMATS
    assert FsSourceConfig(root="/x").include_patterns == formats.include_patterns()
    assert [f"*{ext}" for ext in formats.FORMATS] == formats.include_patterns()[: len(formats.FORMATS)]


@pytest.mark.parametrize(
    ("module", "names"),
    [
        ("storage", ["StorageConfig", "LanceDBConfig", "DatabaseEntry"]),
        ("embeddings", ["EmbeddingsConfig", "EmbeddingModelConfig"]),
        ("search", ["SearchConfig", "RerankingConfig"]),
        ("qa", ["QAConfig", "QAModelConfig", "SandboxConfig"]),
        ("processing", ["ProcessingConfig", "PictureModelConfig"]),
        ("sources", ["FsSourceConfig", "S3SourceConfig", "RetryConfig"]),
        ("ingester", ["IngesterConfig", "QueueConfig", "WorkersConfig"]),
        ("app", ["AppConfig"]),
    ],
)
def test_each_section_lives_with_its_owner_and_keeps_its_old_import_path(module, names):
    import importlib

    from haiku.core.config import models

    owner = importlib.import_module(f"haiku.core.config.{module}")
    for name in names:
        assert getattr(models, name) is getattr(owner, name), name
