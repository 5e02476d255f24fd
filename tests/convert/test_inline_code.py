"""Inline code stays inline (docs/ingester.md, "Chunks"): in the stored markdown, in the
chunks and in the text embedded, for markdown and HTML alike."""

from __future__ import annotations

import pytest

MARKDOWN = b"# Tuning\n\nSet a `top_n`.\n\nThen confirm with `journalctl --disk-usage`.\n\n```\nblock code\n```\n"
HTML = (
    b"<html><body><h1>Tuning</h1><p>Set a <code>top_n</code>.</p>"
    b"<p>Then confirm with <code>journalctl --disk-usage</code>.</p><pre><code>block code</code></pre></body></html>"
)
CASES = [("notes.md", "md", MARKDOWN), ("notes.html", "html", HTML)]


@pytest.mark.parametrize(("name", "fmt", "data"), CASES, ids=["markdown", "html"])
def test_inline_code_stays_inline_in_content_chunks_and_embedded_text(converter, name, fmt, data):
    document = converter.convert(name=name, fmt=fmt, data=data)
    chunk_text = "\n".join(c.content for c in document.chunks)
    embedded = "\n".join(c.embed_text for c in document.chunks)
    for text in (document.content, chunk_text, embedded):
        assert "Set a `top_n`." in text
        assert "Then confirm with `journalctl --disk-usage`." in text
        assert "```\ntop_n\n```" not in text


@pytest.mark.parametrize(("name", "fmt", "data"), CASES, ids=["markdown", "html"])
def test_a_code_block_stays_a_fenced_block(converter, name, fmt, data):
    document = converter.convert(name=name, fmt=fmt, data=data)
    assert "```\nblock code\n```" in "\n".join(c.content for c in document.chunks)


def test_a_long_paragraph_with_inline_code_is_split_within_chunk_size_and_kept_inline(converter, count_tokens, chunk_size):
    sentence = "The `max_file_size` key bounds what one source reads, and **bold** words stay in the run. "
    document = converter.convert(name="long.md", fmt="md", data=("# Limits\n\n" + sentence * 12).encode())
    assert len(document.chunks) > 1
    assert max(count_tokens(c.embed_text) for c in document.chunks) <= chunk_size
    joined = " ".join(c.content for c in document.chunks)
    assert "```" not in joined and joined.count("`max_file_size`") == 12


def test_inline_parts_are_spaced_as_prose():
    from haiku.core.convert.serializers import join_inline

    assert join_inline(["Set a", "`top_n`", "."]) == "Set a `top_n`."
    assert join_inline(["see", "(", "`x`", ")", "and", "**y**", ","]) == "see (`x`) and **y**,"
