"""``execute_code``: Python over the selected databases' documents, isolated (docs/sandbox.md).

    result = await execute_code(client, "print(len(list_documents()))", sources=["papers"])
    print(result.render())

The code runs in a separate process in fresh Linux namespaces with no
network, no host filesystem but the Python runtime (read-only) and the
``/documents`` tree, resource limits and a wall-clock kill; see docs/sandbox.md.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from haiku.rag.sandbox._process import RunOutcome, run_in_jail
from haiku.rag.sandbox.errors import SandboxUnavailableError, SharedDocumentIdError
from haiku.rag.sandbox.mount import Admit, MountedDocument, check_mountable, collect, write_tree

if TYPE_CHECKING:
    from haiku.core.config import AppConfig
    from haiku.rag.client import HaikuRAG

__all__ = ["SandboxResult", "SandboxUnavailableError", "SharedDocumentIdError", "check_selection", "execute_code"]

_MAX_HELPER_LIMIT = 100


@dataclass(frozen=True)
class SandboxResult:
    output: str
    """stdout, then the last expression's value, capped at max_output_chars."""
    error: str | None
    """The traceback when the code raised, or why it was stopped."""
    timed_out: bool
    truncated: bool

    @property
    def ok(self) -> bool:
        return self.error is None and not self.timed_out

    def render(self) -> str:
        parts = [self.output.rstrip("\n")] if self.output else []
        if self.truncated:
            parts.append("[output truncated: sandbox.max_output_chars reached]")
        if self.error:
            parts.append(self.error.rstrip("\n"))
        return "\n".join(parts) if parts else "(no output)"


def _result(outcome: RunOutcome, timeout_s: float, max_chars: int) -> SandboxResult:
    if outcome.timed_out:  # what it printed before being stopped is kept
        return SandboxResult(
            outcome.stdout[:max_chars],
            f"Error: the code ran past sandbox.timeout_s ({timeout_s:g} s) and was stopped",
            True,
            len(outcome.stdout) > max_chars,
        )
    output = outcome.stdout
    truncated = outcome.truncated
    if outcome.value is not None:
        output = f"{output}{'' if not output or output.endswith(chr(10)) else chr(10)}{outcome.value}"
    if len(output) > max_chars:
        output, truncated = output[:max_chars], True
    return SandboxResult(output, outcome.error, False, truncated)


def _search_hit(result: Any) -> dict[str, Any]:
    return {
        "source": result.source,
        "chunk_id": result.chunk_id,
        "document_id": result.document_id,
        "document_uri": result.document_uri,
        "document_title": result.document_title,
        "score": result.score,
        "content": result.content,
        "headings": result.headings,
        "page_numbers": result.page_numbers,
    }


async def check_selection(
    client: HaikuRAG,
    *,
    sources: Sequence[str] | None = None,
    filter: str | None = None,
    admit: Admit | None = None,
) -> None:
    """Raise SharedDocumentIdError now when ``execute_code`` over this selection would be refused;
    reads document ids only."""
    clients = await client.clients_covering(client.check_sources(sources))
    await check_mountable(clients, filter=filter, admit=admit)


async def execute_code(
    client: HaikuRAG,
    code: str,
    *,
    sources: Sequence[str] | None = None,
    filter: str | None = None,
    admit: Admit | None = None,
    config: AppConfig | None = None,
) -> SandboxResult:
    """Run ``code`` over the documents of ``client.clients_covering(sources)`` that pass
    ``filter`` (SQL) and ``admit`` (a (database, id) predicate).

    Raises SharedDocumentIdError (a ValueError) when two selected databases hold one document id, and
    SandboxUnavailableError when this machine cannot isolate the code.
    """
    settings = (config or client.config).sandbox
    selection = client.check_sources(sources)
    clients = await client.clients_covering(selection)
    documents: list[MountedDocument] = await collect(clients, filter=filter, admit=admit) if clients else []
    listing = [d.listing() for d in documents]

    async def search(args: dict[str, Any]) -> list[dict[str, Any]]:
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            raise ValueError("search(query) needs a non-empty query string")
        limit = args.get("limit", 10)
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise ValueError("search(limit=…) takes a positive integer")
        if not clients:
            return []
        results = await client.search(
            query, limit=min(limit, _MAX_HELPER_LIMIT), filter=filter, sources=selection
        )
        return [_search_hit(r) for r in results if admit is None or admit(r.source, r.document_id)]

    async def list_documents(_: dict[str, Any]) -> list[dict[str, Any]]:
        return listing

    workdir = Path(tempfile.mkdtemp(prefix="haiku-sandbox-"))
    try:
        write_tree(workdir / "documents", documents)
        outcome = await run_in_jail(
            workdir,
            code,
            handlers={"search": search, "list_documents": list_documents},
            timeout_s=settings.timeout_s,
            max_output_chars=settings.max_output_chars,
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return _result(outcome, settings.timeout_s, settings.max_output_chars)
