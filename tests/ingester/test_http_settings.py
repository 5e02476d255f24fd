"""ingester.http's settings and the metrics' small rules, without a daemon (docs/operations.md)."""

from __future__ import annotations

import pytest

from haiku.core.config import config_from_dict
from haiku.core.config.ingester_http import IngesterHttpConfig


def test_a_host_off_loopback_without_a_token_is_refused_naming_the_keys():
    with pytest.raises(ValueError, match=r"ingester\.http\.token_file or ingester\.http\.token_env"):
        config_from_dict({"ingester": {"http": {"enabled": True, "host": "0.0.0.0"}}})


def test_loopback_needs_no_token():
    for host in ("127.0.0.1", "localhost", "::1"):
        assert IngesterHttpConfig(enabled=True, host=host).read_token() is None


def test_the_token_is_read_from_its_file_or_its_environment_variable(tmp_path, monkeypatch):
    token_file = tmp_path / "token"
    token_file.write_text("from-the-file\n")
    assert IngesterHttpConfig(host="0.0.0.0", enabled=True, token_file=token_file).read_token() == "from-the-file"
    monkeypatch.setenv("HAIKU_TEST_TOKEN", "from-the-env")
    assert IngesterHttpConfig(host="0.0.0.0", enabled=True, token_env="HAIKU_TEST_TOKEN").read_token() == "from-the-env"


def test_an_unset_token_variable_is_an_error_naming_it(monkeypatch):
    monkeypatch.delenv("HAIKU_TEST_TOKEN", raising=False)
    with pytest.raises(ValueError, match="HAIKU_TEST_TOKEN is not set"):
        IngesterHttpConfig(host="0.0.0.0", enabled=True, token_env="HAIKU_TEST_TOKEN").read_token()


def test_a_reload_that_changes_ingester_http_is_not_refused_and_says_so():
    from haiku.ingester.reload import plan_reload

    old = config_from_dict({"ingester": {"http": {"enabled": True, "port": 8790}}})
    new = config_from_dict({"ingester": {"http": {"enabled": True, "port": 8791}}})
    plan = plan_reload(old, new, [])
    assert plan.http_changed and plan.empty


def test_files_skipped_show_each_sources_latest_sweep_and_the_files_skipped_since():
    from haiku.ingester.metrics import IngesterMetrics
    from haiku.ingester.skips import SkipReason, SkipTally

    metrics = IngesterMetrics(engine="local", process=False)

    def shown(reason: str) -> float | None:
        return metrics.registry.get_sample_value("haiku_ingester_files_skipped", {"database": "papers", "reason": reason})

    first, second = SkipTally(), SkipTally()
    first.add(SkipReason.TOO_LARGE, "big.pdf")
    first.add(SkipReason.TOO_LARGE, "bigger.pdf")
    second.add(SkipReason.TOO_LARGE, "huge.pdf")
    metrics.sweep_skipped("papers", "docs", first)
    metrics.sweep_skipped("papers", "scans", second)
    assert shown("too_large") == 3
    metrics.file_skipped("papers", "docs", "file:///d/empty.md", SkipReason.EMPTY)
    metrics.file_skipped("papers", "docs", "file:///d/empty.md", SkipReason.EMPTY)  # a second event, one file
    assert shown("empty") == 1
    metrics.sweep_skipped("papers", "docs", SkipTally())  # the next sweep replaces what was known of the source
    assert shown("too_large") == 1 and shown("empty") == 0
