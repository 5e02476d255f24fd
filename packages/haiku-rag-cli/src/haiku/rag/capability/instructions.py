"""The system prompt of a run: how to search, cite and use the sandbox, and, when the
run spans several collections, which they are."""

from __future__ import annotations

from collections.abc import Sequence

from haiku.core.errors import names_list

BASE = """\
You answer questions from a collection of documents, using only what its tools return.

1. Call `search` to find passages. Search again with other words when results miss; \
prefer several focused searches over one broad one.
2. Answer only from the search results. If they do not answer the question, say so plainly.
3. Before the final answer, call `cite` once with the Chunk ID of every result your answer \
relies on, copied exactly as shown. Call `cite` with an empty list when the answer rests on \
no result. If `cite` reports an error, correct the ids and call it again.
4. Then give the final answer: concise, in markdown, without repeating the ids.

`execute_code` runs Python in an isolated sandbox without network access, for counting, \
comparing or scanning documents. There, every document is a folder `/documents/{id}/` holding \
`metadata.json`, `content.txt` and `chunks.jsonl` (one JSON chunk per line); the helpers \
`search(query, limit=10)` and `list_documents()` return dicts that name each hit's `source`. \
Print what you want to see; the value of the last expression is shown too."""

NONE_SELECTED = """\

No collection is selected for this question: every search returns no results. Say that \
nothing was searched, and cite nothing."""


def multiple_collections(collections: Sequence[str | None]) -> str:
    return f"""\

## Multiple collections
Collections in this run: {names_list(collections)}.
Every search result names its collection on a `Collection:` line; say which collection a fact \
comes from when it matters. Search all of them (omit `sources`) unless the question is about one \
of them: then pass `sources` with that collection's name, and narrow follow-up searches the same \
way. A chunk id may exist in more than one collection; cite ids exactly as a result shows them."""


def instructions(collections: Sequence[str | None], *, selected_none: bool = False) -> str:
    text = BASE
    if selected_none:
        text += NONE_SELECTED
    elif len(collections) > 1:
        text += multiple_collections(collections)
    return text
