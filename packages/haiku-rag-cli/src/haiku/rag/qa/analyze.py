"""Analysis: a question answered by code run in the sandbox (docs/qa.md, "Analyze").

``analyze(client, question, sources=None)``: the client lends itself
to a RAG capability whose only tool is ``execute_code`` over the selected
databases' documents, and gets back the answer with every program it ran.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from haiku.core.errors import EmptyQueryError

if TYPE_CHECKING:
    from haiku.rag.client import Analysis, HaikuRAG
    from haiku.rag.llm.model import ChatModel


async def analyze(
    client: HaikuRAG, question: str, sources: Sequence[str] | None = None, *, model: ChatModel | None = None
) -> Analysis:
    """Analyze ``client``'s databases (or the ``sources`` among them) to answer ``question``.

    The question is checked, and ``sources`` by name, and the selection for a shared document id, before any
    model request.
    """
    from haiku.rag.capability import RAGState, create_capability

    EmptyQueryError.check(question)
    selection = client.check_sources(sources)
    return await create_capability(rag=client).analyze(question, RAGState(sources=selection), model=model)
