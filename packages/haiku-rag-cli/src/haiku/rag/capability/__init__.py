"""The RAG capability: search, cite and execute_code for a model answering questions
over the databases a configuration places (docs/qa.md).

    capability = create_capability(config=config, sources=["manuals", "specs"])
    answer, citations = await capability.ask("What changed?")

    # the agent-spec form: capabilities: [{RAGCapability: {sources: [manuals, specs]}}]
    capability = RAGCapability.from_spec({"sources": ["manuals", "specs"]}, config=config)

A client lent with ``rag=`` is reused and never closed; a client the
capability opens itself is closed when its run ends.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from haiku.core.config import AppConfig, load_config
from haiku.core.errors import AmbiguousDatabaseError, UnknownDatabaseError
from haiku.core.scope import DatabaseScope
from haiku.rag.capability.answer import Answer
from haiku.rag.capability.selection import DocumentFilter
from haiku.rag.capability.state import RAGState

if TYPE_CHECKING:
    from haiku.rag.client import HaikuRAG
    from haiku.rag.llm.model import ChatModel

__all__ = ["Answer", "DocumentFilter", "RAGCapability", "RAGState", "create_capability"]


class RAGCapability:
    """Answers questions over a fixed coverage: a lent client's, or a scope it opens per run."""

    def __init__(
        self,
        config: AppConfig,
        *,
        rag: HaikuRAG | None = None,
        scope: DatabaseScope | None = None,
        request_limit: int | None = None,
    ) -> None:
        if (rag is None) == (scope is None):
            raise ValueError("a capability covers either a lent client (rag=) or a scope")
        self.config = config
        self.borrowed_rag = rag
        self.scope = scope
        self.request_limit = request_limit if request_limit is not None else config.qa.request_limit
        if self.request_limit < 1:
            raise ValueError("request_limit must be at least 1")

    @classmethod
    def from_spec(
        cls, spec: Mapping[str, Any] | None, *, config: AppConfig | None = None, rag: HaikuRAG | None = None
    ) -> RAGCapability:
        """Build from an agent spec: ``{"sources": [...], "request_limit": N}``, optionally
        wrapped as ``{"RAGCapability": {...}}``."""
        body: Mapping[str, Any] = spec or {}
        if set(body) == {"RAGCapability"}:
            body = body["RAGCapability"] or {}
        unknown = set(body) - {"sources", "request_limit"}
        if unknown:
            raise ValueError(
                f"RAGCapability takes sources and request_limit, not {', '.join(sorted(map(str, unknown)))}"
            )
        return create_capability(
            config=config, rag=rag, sources=body.get("sources"), request_limit=body.get("request_limit")
        )

    # --- coverage --------------------------------------------------------------------------

    @property
    def source_names(self) -> tuple[str, ...]:
        """The databases this capability covers, known without opening any."""
        if self.borrowed_rag is not None:
            return self.borrowed_rag.source_names
        assert self.scope is not None
        return tuple(n for n in self.scope.names if n is not None)

    def check_state(self, state: RAGState) -> None:
        """A question's selection and filter must name covered databases; checked by name."""
        covered = self.source_names
        named = list(state.sources or [])
        if state.document_filter is not None:
            named += [n for n in state.document_filter.databases if n is not None]
        unknown = [n for n in dict.fromkeys(named) if n not in covered]
        if unknown:
            raise UnknownDatabaseError.on_client(unknown, covered)

    # --- running ---------------------------------------------------------------------------

    async def _ensure_rag(self) -> tuple[HaikuRAG, bool]:
        """The lent client if there is one (never closed here), else one this run opens and closes."""
        if self.borrowed_rag is not None:
            return self.borrowed_rag, False
        from haiku.rag.client import HaikuRAG

        assert self.scope is not None
        client = HaikuRAG.from_scope(self.scope, self.config, read_only=True)
        await client.__aenter__()
        return client, True

    async def ask(
        self, question: str, state: RAGState | None = None, *, model: ChatModel | None = None
    ) -> Answer:
        """Answer ``question``; returns the answer and this question's citations in first-cited order
        (an ``Answer``, which also says whether the answer is grounded).

        ``state`` carries the conversation: pass the same one for follow-up questions.
        """
        from haiku.rag.capability.run import Run
        from haiku.rag.llm.loop import run_tools_loop
        from haiku.rag.llm.model import ChatModel

        state = state if state is not None else RAGState()
        self.check_state(state)
        client, owned = await self._ensure_rag()
        own_model = model is None
        chat = model if model is not None else ChatModel(self.config.qa.model)
        before = len(state.messages)
        try:
            run = Run(client, state)
            state.messages.append({"role": "user", "content": question})
            messages = [{"role": "system", "content": run.instructions()}, *state.messages]
            answer = await run_tools_loop(chat, messages, run.tools(), request_limit=self.request_limit)
            state.messages[:] = messages[1:]
            return Answer(answer, list(run.desk.cited), run.grounding())
        except BaseException:
            # A failed question leaves the conversation as it was before it.
            del state.messages[before:]
            raise
        finally:
            if own_model:
                await chat.aclose()
            if owned:
                await client.aclose()


def create_capability(
    db_path: str | Path | None = None,
    config: AppConfig | None = None,
    *,
    rag: HaikuRAG | None = None,
    sources: Sequence[str] | None = None,
    request_limit: int | None = None,
) -> RAGCapability:
    """A capability over the configured databases, narrowed by ``sources``; or over ``db_path``;
    or over a lent client ``rag``. Opens nothing."""
    if sources is not None and isinstance(sources, str):
        raise TypeError("sources takes a list of database names, not a single string")
    if sources is not None and (db_path is not None or rag is not None):
        given = "db_path" if db_path is not None else "rag="
        raise AmbiguousDatabaseError(
            f"sources={list(sources)!r} beside {given}: {given} already says which databases the "
            "capability covers; pass one of them"
        )
    if db_path is not None and rag is not None:
        raise AmbiguousDatabaseError("db_path and rag= both say which databases the capability covers")
    if rag is not None:
        return RAGCapability(config or rag.config, rag=rag, request_limit=request_limit)
    config = config if config is not None else load_config()
    if db_path is not None:
        scope = DatabaseScope.resolve(config, database_path=db_path)
    else:
        scope = DatabaseScope.resolve(config)
        if sources is not None:
            scope = scope.select(sources)
    return RAGCapability(config, scope=scope, request_limit=request_limit)
