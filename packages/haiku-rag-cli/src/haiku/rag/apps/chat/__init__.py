"""The chat app: a conversation, its citations and a document filter on one screen (docs/cli.md, "chat").

    await run_chat(client, model)

Textual is imported only here, when the app runs; ``haiku-rag chat`` opens it
when standard input and output are a terminal, the line prompt otherwise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from haiku.rag.client import HaikuRAG
    from haiku.rag.llm.model import ChatModel


async def run_chat(client: HaikuRAG, model: ChatModel) -> None:
    """Run the app over an open client until the user quits."""
    from haiku.rag.apps.chat.app import ChatApp

    await ChatApp(client, model).run_async()
