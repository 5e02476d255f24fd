"""One question's run: the tools the model calls, bound to a client and a state.

The run's collections are the question's selection, else every database the
client covers. A search reaches only those; the sandbox mounts only those; the
cite fallback asks only those.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from haiku.core.errors import AmbiguousCitationError, names_list
from haiku.core.models import SearchResult
from haiku.rag.capability.answer import Grounding, grounding_of
from haiku.rag.capability.citations import CitationDesk, Retrieved
from haiku.rag.capability.instructions import instructions
from haiku.rag.capability.pictures import PictureDesk
from haiku.rag.capability.selection import combine_where, narrow
from haiku.rag.capability.state import RAGState
from haiku.rag.llm.loop import Tool, ToolReply, ToolRetry

if TYPE_CHECKING:
    from haiku.rag.client import HaikuRAG
    from haiku.rag.sandbox import SandboxResult

log = logging.getLogger(__name__)

MAX_SEARCH_LIMIT = 50
NO_RESULTS = "No results found."


class Run:
    def __init__(self, client: HaikuRAG, state: RAGState) -> None:
        self.client = client
        self.state = state
        covered: tuple[str | None, ...] = client.source_names or tuple(client.scope.names)
        self.covered = covered
        if state.sources is not None:
            self.collections: tuple[str | None, ...] = tuple(dict.fromkeys(state.sources))
        else:
            self.collections = covered
        self.multi = len(self.collections) > 1
        self.retrieved = Retrieved()
        self.desk = CitationDesk(client, state, self.retrieved, state.sources)
        qa = client.config.qa
        self.pictures = PictureDesk(client, limit=qa.max_images, images=qa.model.images, multi=self.multi)
        self.consulted = 0
        """How many times the model looked at the documents (search, execute_code)."""

    def grounding(self) -> Grounding:
        """How the answer rests on the documents, once the model has answered."""
        return grounding_of(
            cited=bool(self.desk.cited), consulted=self.consulted > 0, declared_ungrounded=self.desk.ungrounded
        )

    # --- what the model is given -------------------------------------------------------

    def instructions(self) -> str:
        return instructions(self.collections, selected_none=self.state.sources == [])

    def tools(self) -> list[Tool]:
        return [self._search_tool(), self._cite_tool(), self.code_tool(self.execute_code)]

    def _search_tool(self) -> Tool:
        properties: dict[str, Any] = {
            "query": {"type": "string", "description": "What to look for, in natural language or keywords."},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_SEARCH_LIMIT,
                "description": "How many results to return (default: the configured search.limit).",
            },
        }
        if self.multi:
            properties["sources"] = {
                "type": "array",
                "items": {"type": "string", "enum": [c for c in self.collections if c is not None]},
                "description": (
                    f"Collections to search, out of {names_list(self.collections)}. "
                    "Omit to search all of them."
                ),
            }
        return Tool(
            name="search",
            description="Search the documents; returns passages with their Chunk ID, document and score.",
            parameters={"type": "object", "properties": properties, "required": ["query"]},
            handler=self.search,
        )

    def _cite_tool(self) -> Tool:
        return Tool(
            name="cite",
            description=(
                "Record the chunks the answer relies on, by the Chunk ID search showed. "
                "An empty list declares the answer not grounded in the documents."
            ),
            parameters={
                "type": "object",
                "properties": {"chunk_ids": {"type": "array", "items": {"type": "string"}}},
                "required": ["chunk_ids"],
            },
            handler=self.cite,
        )

    def code_tool(self, handler: Callable[[dict[str, Any]], Awaitable[str]]) -> Tool:
        """The execute_code tool, answered by ``handler``."""
        return Tool(
            name="execute_code",
            description=(
                "Run Python in an isolated sandbox over the documents under /documents/{id}/ "
                "(metadata.json, content.txt, chunks.jsonl); helpers search(query, limit=10) and "
                "list_documents(). Returns stdout and the last expression's value."
            ),
            parameters={
                "type": "object",
                "properties": {"code": {"type": "string", "description": "Python source to run."}},
                "required": ["code"],
            },
            handler=handler,
        )

    # --- selection -----------------------------------------------------------------------

    def _call_selection(self, requested: object) -> list[str] | None:
        """The databases one search reads: the question's selection, narrowed by the call."""
        base: list[str] | None = None if self.state.sources is None else list(self.collections)  # type: ignore[arg-type]
        if requested is None:
            return base
        if not isinstance(requested, list) or not all(isinstance(n, str) for n in requested):
            raise ToolRetry("sources takes a list of collection names")
        unknown = [n for n in dict.fromkeys(requested) if n not in self.collections]
        if unknown:
            raise ToolRetry(
                f"Unknown collection(s): {', '.join(unknown)}. This run covers: {names_list(self.collections)}."
            )
        return list(dict.fromkeys(requested))

    def _reads(self, selection: list[str] | None) -> list[str] | None:
        return narrow(selection, self.covered, self.state.document_filter)

    def _where(self) -> str | None:
        document_filter = self.state.document_filter
        return combine_where(self.state.filter, document_filter.where() if document_filter else None)

    def _admit(self, source: str | None, document_id: str | None) -> bool:
        document_filter = self.state.document_filter
        return document_filter is None or document_filter.admits(source, document_id)

    # --- tools ---------------------------------------------------------------------------

    async def search(self, args: dict[str, Any]) -> str | ToolReply:
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            raise ToolRetry("search needs a non-empty query string")
        limit = args.get("limit")
        if limit is not None:
            if isinstance(limit, bool) or not isinstance(limit, int | float) or limit < 1:
                raise ToolRetry(f"limit takes a positive integer up to {MAX_SEARCH_LIMIT}")
            limit = min(int(limit), MAX_SEARCH_LIMIT)
        if "sources" in args and not self.multi:
            # Over one collection there is nothing to narrow; the schema offers no sources.
            args = {k: v for k, v in args.items() if k != "sources"}
        reads = self._reads(self._call_selection(args.get("sources")))
        self.consulted += 1
        hits, shown = await self._search(query.strip(), limit, reads)
        if not shown:
            return NO_RESULTS
        self.retrieved.add(shown, hits=hits)
        total = len(shown)
        text = "\n\n".join(
            r.format_for_agent(rank, total, include_collection=self.multi) for rank, r in enumerate(shown, 1)
        )
        pictures = await self.pictures.gather(shown)
        if not pictures:
            return text
        if not self.pictures.images:
            captions = self.pictures.as_text(pictures)
            return f"{text}\n\n{captions}" if captions else text
        return ToolReply(text, self.pictures.as_parts(pictures))

    async def _search(
        self, query: str, limit: int | None, reads: Sequence[str] | None
    ) -> tuple[list[SearchResult], list[SearchResult]]:
        """The chunks found, and what the model is shown: each expanded with its neighbours."""
        if reads is not None and not reads:
            return [], []
        results = await self.client.search(query, limit=limit, filter=self._where(), sources=reads)
        results = [r for r in results if self._admit(r.source, r.document_id)]
        return results, await self.client.expand_context(results)

    async def cite(self, args: dict[str, Any]) -> str:
        ids = args.get("chunk_ids")
        if ids is None:
            ids = []
        if isinstance(ids, str):
            ids = [ids]
        if not isinstance(ids, list):
            raise ToolRetry("cite takes chunk_ids, a list of Chunk ID strings")
        try:
            made, ignored = await self.desk.cite(ids)
        except AmbiguousCitationError as exc:
            raise ToolRetry(
                f"{exc}. Call cite again without that id, using ids that appear once in the results, or none."
            ) from None
        if not ids:
            return "Recorded: the answer is not grounded in the documents."
        if not made:
            raise ToolRetry(
                "none of these ids matches a chunk the searches returned: "
                f"{', '.join(map(str, ignored))}. Copy the Chunk ID values verbatim from the search results."
            )
        lines = ["Recorded citations:", *(c.format_for_agent() for c in made)]
        if ignored:
            lines.append(f"Ignored (no such chunk): {', '.join(map(str, ignored))}")
        return "\n".join(lines)

    def _sandbox_selection(self) -> dict[str, Any]:
        """What the sandbox mounts for this question: its databases, filters and document filter."""
        reads = self._reads(None if self.state.sources is None else list(self.collections))  # type: ignore[arg-type]
        return {
            "sources": reads,
            "filter": self._where(),
            "admit": self._admit if self.state.document_filter is not None else None,
        }

    async def check_sandbox(self) -> None:
        """Refuse now (SharedDocumentIdError) a selection the sandbox could not mount."""
        from haiku.rag.sandbox import check_selection

        await check_selection(self.client, **self._sandbox_selection())

    async def run_code(self, code: str) -> SandboxResult:
        """Run ``code`` over this question's documents; the sandbox's errors are raised as they are."""
        from haiku.rag.sandbox import execute_code

        return await execute_code(self.client, code, **self._sandbox_selection())

    async def execute_code(self, args: dict[str, Any]) -> str:
        from haiku.rag.sandbox import SandboxUnavailableError

        code = code_argument(args)
        self.consulted += 1
        try:
            result = await self.run_code(code)
        except ValueError as exc:
            raise ToolRetry(f"execute_code cannot run over this selection: {exc}") from None
        except SandboxUnavailableError as exc:
            log.warning("execute_code unavailable: %s", exc)
            raise ToolRetry(f"execute_code is unavailable on this machine ({exc}); answer without it") from None
        return result.render()


def code_argument(args: dict[str, Any]) -> str:
    """The Python source of an execute_code call."""
    code = args.get("code")
    if not isinstance(code, str) or not code.strip():
        raise ToolRetry("execute_code needs the Python source in `code`")
    return code
