"""The RAG capability: search, cite and execute_code for a model answering questions
over the databases a configuration places (docs/qa.md).

    capability = create_capability(config=config, sources=["manuals", "specs"])
    answer, citations = await capability.ask("What changed?")
    analysis = await capability.analyze("How many documents mention Lance?")

    # the agent-spec form: capabilities: [{RAGCapability: {sources: [manuals, specs]}}]
    capability = RAGCapability.from_spec({"sources": ["manuals", "specs"]}, config=config)

A client lent with ``rag=`` is reused and never closed; a client the
capability opens itself is closed when its run ends.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from haiku.core.config import AppConfig, load_config
from haiku.core.errors import AmbiguousDatabaseError, UnknownDatabaseError
from haiku.core.scope import DatabaseScope
from haiku.rag.capability.answer import Answer
from haiku.rag.capability.selection import DocumentFilter
from haiku.rag.capability.state import RAGState

if TYPE_CHECKING:
    from haiku.rag.client import Analysis, HaikuRAG
    from haiku.rag.llm.loop import Tool
    from haiku.rag.llm.model import ChatModel, TextSink

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
        self,
        question: str,
        state: RAGState | None = None,
        *,
        model: ChatModel | None = None,
        on_text: TextSink | None = None,
    ) -> Answer:
        """Answer ``question``; returns the answer and this question's citations in first-cited order
        (an ``Answer``, which also says whether the answer is grounded).

        ``state`` carries the conversation: pass the same one for follow-up questions.
        ``on_text`` sees the answer's text as the model streams it (docs/qa.md, "Streaming").
        """
        from haiku.rag.capability.run import Run

        state = state if state is not None else RAGState()
        async with self._session(state, model) as (client, chat):
            run = Run(client, state)
            answer = await _turn(chat, state, question, run.instructions(), run.tools(), self.request_limit, on_text)
            return Answer(answer, list(run.desk.cited), run.grounding())

    async def analyze(
        self,
        question: str,
        state: RAGState | None = None,
        *,
        model: ChatModel | None = None,
        on_text: TextSink | None = None,
    ) -> Analysis:
        """Answer ``question`` by code the model runs in the sandbox over the state's documents;
        returns the answer and every program it ran (docs/qa.md, "Analyze").

        A selection the sandbox cannot mount (two databases sharing a document id) is refused
        with SharedDocumentIdError before the model is asked.
        """
        from haiku.rag.capability.analysis import AnalysisRun
        from haiku.rag.capability.run import Run
        from haiku.rag.client import Analysis

        state = state if state is not None else RAGState()
        async with self._session(state, model) as (client, chat):
            analysis = AnalysisRun(Run(client, state))
            await analysis.run.check_sandbox()
            answer = await _turn(
                chat, state, question, analysis.instructions(), analysis.tools(), self.request_limit, on_text
            )
            return Analysis(question=question, answer=answer, programs=list(analysis.programs))

    @contextlib.asynccontextmanager
    async def _session(
        self, state: RAGState, model: ChatModel | None
    ) -> AsyncIterator[tuple[HaikuRAG, ChatModel]]:
        """The client and chat model of one question, closed after it when this run opened them."""
        from haiku.rag.llm.model import ChatModel

        self.check_state(state)
        client, owned = await self._ensure_rag()
        chat = model if model is not None else ChatModel(self.config.qa.model)
        try:
            yield client, chat
        finally:
            if model is None:
                await chat.aclose()
            if owned:
                await client.aclose()


async def _turn(
    chat: ChatModel,
    state: RAGState,
    question: str,
    system: str,
    tools: list[Tool],
    request_limit: int,
    on_text: TextSink | None,
) -> str:
    """One question of the conversation in ``state``; a failed one leaves it as it was before."""
    from haiku.rag.llm.loop import run_tools_loop

    before = len(state.messages)
    try:
        state.messages.append({"role": "user", "content": question})
        messages = [{"role": "system", "content": system}, *state.messages]
        answer = await run_tools_loop(chat, messages, tools, request_limit=request_limit, on_text=on_text)
        state.messages[:] = messages[1:]
        return answer
    except BaseException:
        del state.messages[before:]
        raise


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
