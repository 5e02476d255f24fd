"""Secrets in URLs are masked wherever a URL is printed or logged."""

from __future__ import annotations

import pytest
from rag_support import config_data
from rag_support import invoke as cli

from haiku.core.masking import mask_log_event, mask_urls
from support import write_config

SECRETS = ("PASSWORD", "hunter2", "tok-123", "sig-456")


def _leaks(text: str) -> list[str]:
    return [secret for secret in SECRETS if secret in text]


@pytest.fixture
def credentialed(tmp_path):
    data = config_data(
        tmp_path / "data",
        {"remote": "s3://bucket/remote.lancedb?X-Amz-Signature=sig-456"},
        lancedb={
            "storage_options": {
                "aws_endpoint": "http://USER:PASSWORD@127.0.0.1:9",
                "aws_access_key_id": "testing",
                "aws_secret_access_key": "testing",
                "allow_http": "true",
            },
            "object_storage_timeout_s": 5,
        },
        embeddings={"model": {"provider": "openai", "name": "m", "vector_dim": 384,
                              "base_url": "http://bob:hunter2@127.0.0.1:9/v1?token=tok-123"}},
        qa={"model": {"base_url": "http://bob:hunter2@127.0.0.1:9/v1?api_key=tok-123"}},
    )
    return write_config(tmp_path / "c.yaml", data)


def test_settings_masks_userinfo_and_token_parameters_in_urls(credentialed):
    result = cli("settings", config=credentialed)
    assert result.returncode == 0, result.stderr
    assert _leaks(result.stdout + result.stderr) == []
    assert "aws_endpoint: http://***@127.0.0.1:9" in result.stdout
    assert "token=***" in result.stdout


def test_doctor_prints_no_credentials_of_an_unreachable_database_or_provider(credentialed):
    result = cli("--db-name", "remote", "doctor", config=credentialed)
    assert result.returncode == 1
    assert _leaks(result.stdout + result.stderr) == []
    assert "database 'remote'" in result.stdout


def test_mask_urls_masks_userinfo_and_credential_like_query_values_only():
    assert mask_urls("see http://u:p@host:9000/x?token=abc&page=2") == "see http://***@host:9000/x?token=***&page=2"
    assert mask_urls("s3://b/k?X-Amz-Signature=s&X-Amz-Date=1") == "s3://b/k?X-Amz-Signature=***&X-Amz-Date=1"
    assert mask_urls("http://host/path and a=b") == "http://host/path and a=b"
    assert mask_log_event(None, "info", {"event": "x", "url": "https://a:b@h/", "n": 1}) == {
        "event": "x", "url": "https://***@h/", "n": 1,
    }
