"""The line-oriented chat session (docs/cli.md).

Each line is a question, or a command:

    /sources a b        ask only databases a and b from now on; /sources alone: all of them
    /filter NAME:ID …   read only these documents; a bare ID over one database; /filter alone clears
    /quit               leave (so does end of input)

The selection, the document filter, the conversation and the citation index
persist across questions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from haiku.core.errors import HaikuError, names_list
from haiku.rag.capability import DocumentFilter, RAGState, create_capability
from haiku.rag.qa.render import format_citations, grounding_line

if TYPE_CHECKING:
    from haiku.rag.capability import Answer
    from haiku.rag.client import HaikuRAG
    from haiku.rag.llm.model import ChatModel, TextSink

HELP = """\
Ask a question, or:
  /sources NAME …     ask only these databases (/sources alone: every database)
  /filter NAME:ID …   read only these documents (/filter alone: every document)
  /quit               leave"""

Write = Callable[[str], None]


class ChatSession:
    """One conversation over a client; ``handle`` takes a line and says whether to go on."""

    def __init__(self, client: HaikuRAG, model: ChatModel, write: Write) -> None:
        self.client = client
        self.model = model
        self.write = write
        self.capability = create_capability(rag=client)
        self.state = RAGState()

    @property
    def _covered(self) -> tuple[str | None, ...]:
        return self.client.source_names or tuple(self.client.scope.names)

    @property
    def labels_citations(self) -> bool:
        """Whether a question now spans several databases, so its citations name theirs."""
        selection = self.state.sources
        spanned = len(selection) if selection is not None else len(self._covered)
        if self.state.document_filter is not None:
            spanned = min(spanned, len(self.state.document_filter.databases))
        return spanned > 1

    async def handle(self, line: str) -> bool:
        text = line.strip()
        if not text:
            return True
        if text.startswith("/"):
            return self._command(text)
        try:
            answer = await self.ask(text)
        except (HaikuError, KeyError, ValueError, OSError) as exc:
            self.write(f"Error: {exc}")
            return True
        self.write(answer.text)
        self.write("")
        self.write(format_citations(answer.citations, label=self.labels_citations))
        note = grounding_line(answer.note)
        if note is not None:
            self.write(note)
        return True

    async def ask(self, question: str, on_text: TextSink | None = None) -> Answer:
        """One question of the conversation; its errors are raised, not written."""
        return await self.capability.ask(question, self.state, model=self.model, on_text=on_text)

    def clear(self) -> None:
        """Forget the conversation and its citations; the selection and the filter stay."""
        self.state.messages.clear()
        self.state.citations.clear()

    def _command(self, text: str) -> bool:
        command, *args = text.split()
        try:
            if command in ("/quit", "/exit"):
                return False
            if command == "/help":
                self.write(HELP)
            elif command == "/sources":
                self._set_sources(args)
            elif command == "/filter":
                self._set_filter(args)
            else:
                self.write(f"Unknown command {command}.\n{HELP}")
        except (KeyError, ValueError) as exc:
            self.write(f"Error: {exc}")
        return True

    def _set_sources(self, names: list[str]) -> None:
        if not names:
            self.state.sources = None
            self.write(f"Sources: every database ({names_list(self._covered)}).")
            return
        self.state.sources = self.client.check_sources(names)
        self.write(f"Sources: {names_list(self.state.sources or [])}.")

    def _set_filter(self, tokens: list[str]) -> None:
        if not tokens:
            self.state.document_filter = None
            self.write("Filter cleared: every document.")
            return
        self.state.document_filter = DocumentFilter.parse(tokens, self._covered)
        self.write(f"Filter: {self.state.document_filter.describe()}.")
