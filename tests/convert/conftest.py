"""The converter run in the test process (docs/ingester.md, "Formats"): built once per session."""

from __future__ import annotations

import pytest

CHUNK_SIZE = 64


@pytest.fixture(scope="session")
def converter():
    from haiku.core.convert.converter import Converter
    from haiku.core.embedders import local_model_path

    return Converter(tokenizer_dir=local_model_path(), chunk_size=CHUNK_SIZE)


@pytest.fixture(scope="session")
def chunk_size() -> int:
    return CHUNK_SIZE


@pytest.fixture(scope="session")
def count_tokens():
    """The encoder's own token count (no special tokens, no truncation)."""
    from haiku.core.convert.tokenizer import LocalTokenizer
    from haiku.core.embedders import local_model_path

    return LocalTokenizer.from_model_dir(local_model_path(), CHUNK_SIZE).count_tokens
