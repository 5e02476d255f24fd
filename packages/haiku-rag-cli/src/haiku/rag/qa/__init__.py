"""Question answering with citations (docs/qa.md).

``ask(client, question, filter=None, sources=None)``: the client
lends itself to a RAG capability, so no second connection is opened, and the
configured chat model (``qa.model``) drives the search, cite and
execute_code tools until it answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from haiku.core.errors import EmptyQueryError
from haiku.rag.llm.errors import ModelResponseError, ModelUnavailableError, QAError, RequestLimitError
from haiku.rag.qa.analyze import analyze

if TYPE_CHECKING:
    from haiku.rag.capability.answer import Answer
    from haiku.rag.client import HaikuRAG
    from haiku.rag.llm.model import ChatModel

__all__ = ["ModelResponseError", "ModelUnavailableError", "QAError", "RequestLimitError", "analyze", "ask"]


async def ask(
    client: HaikuRAG,
    question: str,
    filter: str | None = None,
    sources: Sequence[str] | None = None,
    *,
    model: ChatModel | None = None,
) -> Answer:
    """Answer ``question`` from ``client``'s databases (or the ``sources`` among them): an
    ``Answer``, unpacking as ``answer, citations``, that says whether it is grounded.

    The question, the filter and ``sources`` (by name) are checked before any model request;
    ``[]`` answers with no evidence.
    """
    from haiku.core.store.filters import check_document_filter  # the store loads on use, not on import
    from haiku.rag.capability import RAGState, create_capability

    EmptyQueryError.check(question)
    await check_document_filter(filter)
    selection = client.check_sources(sources)
    capability = create_capability(rag=client)
    state = RAGState(sources=selection, filter=filter)
    return await capability.ask(question, state, model=model)
