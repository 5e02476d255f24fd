"""The processing identity: computed from the configuration, compared key by key (docs/ingester.md)."""

from __future__ import annotations

import pytest

from haiku.core.config import AppConfig, ProcessingConfig
from haiku.core.processing_identity import (
    NOT_STORED,
    compare_processing,
    describe_recorded,
    format_entries,
    format_table_digest,
    processing_identity,
)
from haiku.ingester.cli_hints import RESTART_COMMAND, reprocess_hint


def test_every_processing_key_that_shapes_storage_is_in_the_identity_with_its_value(make_config):
    config = make_config(processing={"chunk_size": 99, "ocr": "force"})
    identity = processing_identity(config)
    settings = config.processing.model_dump(mode="json")
    assert {k: identity[f"processing.{k}"] for k in settings if k not in NOT_STORED} == {
        k: v for k, v in settings.items() if k not in NOT_STORED
    }
    assert identity["processing.chunk_size"] == 99 and identity["processing.ocr"] == "force"


def test_the_conversion_time_limit_is_not_part_of_the_identity(make_config):
    quick, slow = make_config(processing={"conversion_timeout_s": 5}), make_config(processing={"conversion_timeout_s": 500})
    assert processing_identity(quick) == processing_identity(slow)
    assert not any("conversion_timeout_s" in key for key in processing_identity(quick))


def test_the_picture_model_counts_by_name_not_by_where_it_is_reached(make_config):
    def picture_model(**settings):
        model = {"base_url": "http://localhost:8000/v1", "name": "vision-1", **settings}
        return processing_identity(make_config(processing={"pictures": "description", "picture_model": model}))

    assert picture_model() == picture_model(base_url="http://gpu:9000/v1", timeout_s=5, concurrency=9)
    assert picture_model()["processing.picture_model.name"] == "vision-1"
    assert picture_model(name="vision-2") != picture_model()


def test_a_key_added_to_the_processing_section_is_covered_without_being_listed():
    class Extended(ProcessingConfig):
        max_pictures: int = 7
        pictures: dict[str, int] = {"min_px": 32}

    config = AppConfig()
    config.processing = Extended()
    identity = processing_identity(config)
    assert identity["processing.max_pictures"] == 7 and identity["processing.pictures.min_px"] == 32


def test_the_identity_names_the_converter_versions_the_chunker_and_each_format(make_config):
    from importlib import metadata

    identity = processing_identity(make_config())
    assert identity["converter.docling"] == metadata.version("docling-slim")
    assert identity["chunker"].endswith("tokenizer all-MiniLM-L6-v2")
    assert isinstance(identity["converter.rules"], int)
    assert identity["formats.pdf"] == "pdf application/pdf" and identity["formats.py"] == "code text/plain python"
    assert {k: v for k, v in identity.items() if k.startswith("formats.")} == format_entries()


def test_an_extension_added_to_the_format_table_is_no_change(make_config, monkeypatch):
    from haiku.core.convert import formats

    recorded = processing_identity(make_config())
    monkeypatch.setitem(formats.FORMATS, ".newfmt", formats.FileFormat("text", "text/plain"))
    drift = compare_processing(recorded, processing_identity(make_config()), documents=3)
    assert drift.state == "matches" and drift.formats_added == ("newfmt",)
    assert drift.as_json()["formats_added"] == ["newfmt"]


def test_an_extension_given_another_converter_is_a_change_of_that_extension_only(make_config, monkeypatch):
    from haiku.core.convert import formats

    recorded = processing_identity(make_config())
    monkeypatch.setitem(formats.FORMATS, ".md", formats.FileFormat("text", "text/plain"))
    drift = compare_processing(recorded, processing_identity(make_config()), documents=3)
    assert drift.state == "differs" and [c.key for c in drift.changes] == ["formats.md"]
    assert "formats.md md text/markdown -> text text/plain" in drift.describe()


def test_a_record_holding_the_older_table_digest_matches_the_same_table(make_config, monkeypatch):
    from haiku.core.convert import formats

    configured = processing_identity(make_config())
    older = {k: v for k, v in configured.items() if not k.startswith("formats.")} | {"formats": format_table_digest()}
    assert compare_processing(older, configured, documents=3).state == "matches"
    monkeypatch.setitem(formats.FORMATS, ".md", formats.FileFormat("text", "text/plain"))
    drift = compare_processing(older, processing_identity(make_config()), documents=3)
    assert [c.key for c in drift.changes] == ["formats"]


def test_a_changed_chunk_size_is_named_with_both_values(make_config):
    recorded = processing_identity(make_config(processing={"chunk_size": 256}))
    drift = compare_processing(recorded, processing_identity(make_config(processing={"chunk_size": 128})), documents=3)
    assert drift.state == "differs" and [c.key for c in drift.changes] == ["processing.chunk_size"]
    assert "processing.chunk_size 256 -> 128" in drift.summary("papers")
    assert "database 'papers'" in drift.summary("papers")
    assert "a reprocess of the database re-processes the others" in drift.summary("papers")
    assert "`haiku-ingester reprocess --db-name papers` re-processes the others" in drift.summary(
        "papers", reprocess=reprocess_hint("papers")
    )


def test_a_serve_that_keeps_its_settings_is_restarted_in_the_callers_words(make_config):
    recorded = processing_identity(make_config(processing={"chunk_size": 256}))
    drift = compare_processing(recorded, processing_identity(make_config(processing={"chunk_size": 128})), documents=3)
    kept = "serve (pid 12)"
    assert (
        "until it is restarted; after that" in drift.predicate("papers", kept_by=kept),
        "until it is restarted (systemctl restart haiku-ingester); after that"
        in drift.predicate("papers", kept_by=kept, restart=RESTART_COMMAND),
    ) == (True, True)


def test_a_database_without_a_record_says_a_reprocess_records_it_in_the_callers_words():
    assert (
        describe_recorded(None, documents=3),
        describe_recorded(None, documents=3, reprocess="`haiku-ingester reprocess`"),
    ) == (
        "not recorded (written by an older haiku-ingester; a reprocess records it)",
        "not recorded (written by an older haiku-ingester; `haiku-ingester reprocess` records it)",
    )


def test_the_same_settings_match(make_config):
    identity = processing_identity(make_config())
    assert compare_processing(dict(identity), identity, documents=3).state == "matches"


@pytest.mark.parametrize(("documents", "state"), [(0, "empty"), (4, "unknown")])
def test_no_record_is_empty_without_documents_and_unknown_with_them(make_config, documents, state):
    drift = compare_processing(None, processing_identity(make_config()), documents=documents)
    assert drift.state == state and drift.changes == ()


def test_a_key_the_record_lacks_is_a_change_and_one_this_machine_cannot_read_is_not(make_config):
    configured = processing_identity(make_config())
    older = {k: v for k, v in configured.items() if k != "processing.ocr"}
    assert [c.key for c in compare_processing(older, configured, documents=1).changes] == ["processing.ocr"]
    without_docling = {k: v for k, v in configured.items() if not k.startswith("converter.docling")}
    assert compare_processing(configured, without_docling, documents=1).state == "matches"
