"""The chat app (docs/cli.md, "chat"): the conversation on the left, its citations and the
document filter on the right, a prompt below.

A line is a question or one of the line prompt's commands (``/sources``,
``/filter``, ``/help``, ``/quit``, handled by ``haiku.rag.qa.chat.ChatSession``).
The answer streams into the conversation while the model writes it; Esc
cancels it. The command palette (ctrl+p) clears the conversation, filters the
documents, shows a citation's grounding and the databases' info.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Label, ListItem, ListView, Markdown, Static

from haiku.core.errors import HaikuError, names_list
from haiku.rag.apps.chat.screens import FilterScreen, Pair, TextScreen
from haiku.rag.apps.chat.views import (
    Pickable,
    database_infos,
    filter_summary,
    grounding_text,
    info_text,
    pickable_documents,
)
from haiku.rag.capability import DocumentFilter
from haiku.rag.qa.chat import HELP, ChatSession
from haiku.rag.qa.render import citation_header, grounding_line

if TYPE_CHECKING:
    from textual.worker import Worker

    from haiku.core.models import Citation
    from haiku.rag.client import HaikuRAG
    from haiku.rag.llm.model import ChatModel

# What a failed question shows in the conversation instead of a traceback.
QUESTION_ERRORS = (HaikuError, KeyError, ValueError, OSError)

APP_HELP = f"""{HELP}
Keys: Esc cancels an answer, ctrl+f filters documents, ctrl+l clears the conversation,
ctrl+p opens the command palette, ctrl+q quits. Enter on a citation shows its grounding."""


class CitationItem(ListItem):
    """One line of the citations pane, keeping the citation it shows."""

    def __init__(self, citation: Citation, *, label: bool) -> None:
        super().__init__(Label(citation_header(citation, label=label), markup=False))
        self.citation = citation
        self.labelled = label


class ChatApp(App[None]):
    TITLE = "haiku-rag chat"
    CSS = """
    #panes { height: 1fr; }
    #conversation { width: 2fr; padding: 0 1; }
    #side { width: 1fr; border-left: solid $primary; padding: 0 1; }
    #citations { height: 1fr; }
    .pane-title { text-style: bold; margin: 1 0 0 0; }
    .question { margin: 1 0 0 0; text-style: bold; color: $accent; }
    .answer { margin: 0 0 0 2; }
    .note { color: $text-muted; margin: 0 0 0 2; }
    .error { color: $error; margin: 0 0 0 2; }
    #filter-status { color: $text-muted; margin: 1 0 0 0; }
    .dialog { width: 80%; height: 80%; border: thick $primary; background: $surface; padding: 1 2; }
    .dialog-title { text-style: bold; margin: 0 0 1 0; }
    .hint { color: $text-muted; }
    .buttons { height: auto; margin: 1 0 0 0; }
    FilterScreen SelectionList { height: 1fr; }
    ModalScreen { align: center middle; }
    """
    BINDINGS: ClassVar = [
        Binding("escape", "cancel_answer", "Cancel answer"),
        Binding("ctrl+f", "filter_documents", "Filter"),
        Binding("ctrl+l", "clear_conversation", "Clear"),
    ]

    def __init__(self, client: HaikuRAG, model: ChatModel) -> None:
        super().__init__()
        self.client = client
        self.session = ChatSession(client, model, self._note)
        self.answering: Worker[None] | None = None
        self._picks: list[Pickable] | None = None

    # --- layout --------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="panes"):
            yield VerticalScroll(id="conversation")
            with Vertical(id="side"):
                yield Label("Citations", classes="pane-title")
                yield ListView(id="citations")
                yield Static("Filter: every document", id="filter-status", markup=False)
        yield Input(placeholder="Ask a question, or /sources, /filter, /help", id="prompt")
        yield Footer()

    def on_mount(self) -> None:
        covered = self.client.source_names or tuple(self.client.scope.names)
        self.sub_title = f"{names_list(covered)} · model {self.session.model.config.name}"
        self.query_one("#prompt", Input).focus()

    @property
    def conversation(self) -> VerticalScroll:
        return self.query_one("#conversation", VerticalScroll)

    def _show(self, text: str, kind: str) -> Static:
        line = Static(text, markup=False, classes=kind)
        self.conversation.mount(line)
        self.conversation.scroll_end(animate=False)
        return line

    def _note(self, text: str) -> None:
        """Where the session's command replies (and its errors) go."""
        self._show(text, "error" if text.startswith("Error:") else "note")

    # --- asking --------------------------------------------------------------------------

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if event.input.id != "prompt" or not text:
            return
        event.input.value = ""
        if text.startswith("/"):
            await self._command(text)
        elif self.answering is not None and self.answering.is_running:
            self._note("An answer is on its way; Esc cancels it.")
        else:
            self._show(text, "question")
            self.answering = self._answer(text)

    async def _command(self, text: str) -> None:
        if text.split()[0] == "/help":
            self._note(APP_HELP)
        elif await self.session.handle(text):
            self._show_filter()
        else:
            self.exit()

    @work(group="answer", exclusive=True)
    async def _answer(self, question: str) -> None:
        streaming = self._show("…", "answer")
        label = self.session.labels_citations

        def grow(text: str) -> None:
            streaming.update(text or "…")
            self.conversation.scroll_end(animate=False)

        try:
            answer = await self.session.ask(question, on_text=grow)
        except asyncio.CancelledError:
            streaming.add_class("note")
            self._note("Answer cancelled.")
            raise
        except QUESTION_ERRORS as exc:
            await streaming.remove()
            self._note(f"Error: {exc}")
            return
        await streaming.remove()
        await self._add_citations(answer.citations, label=label)
        await self.conversation.mount(Markdown(answer.text or "(no answer)", classes="answer"))
        note = grounding_line(answer.note)
        if note is not None:
            self._note(note)
        self.conversation.scroll_end(animate=False)

    async def _add_citations(self, citations: Iterable[Citation], *, label: bool) -> None:
        pane = self.query_one("#citations", ListView)
        for citation in citations:
            await pane.append(CitationItem(citation, label=label))
        if pane.children and pane.index is None:
            pane.index = 0

    def action_cancel_answer(self) -> None:
        if self.answering is not None and self.answering.is_running:
            self.answering.cancel()

    # --- commands ------------------------------------------------------------------------

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield SystemCommand("Clear the conversation", "Forget the questions, answers and citations so far",
                            self.action_clear_conversation)
        yield SystemCommand("Filter documents", "Pick the documents questions read, across databases",
                            self.action_filter_documents)
        yield SystemCommand("Show the grounding of a citation",
                            "The cited chunk's document, section, pages and text", self.action_show_grounding)
        yield SystemCommand("Database info", "Where each database is, its embedder and what it holds",
                            self.action_database_info)
        yield from super().get_system_commands(screen)

    def action_clear_conversation(self) -> None:
        self.action_cancel_answer()
        self.session.clear()
        self.conversation.remove_children()
        self.query_one("#citations", ListView).clear()
        self._note("Conversation cleared.")

    @work(group="dialog", exclusive=True)
    async def action_filter_documents(self) -> None:
        if self._picks is None:
            try:
                self._picks = await pickable_documents(self.client)
            except QUESTION_ERRORS as exc:
                self._note(f"Error: {exc}")
                return
        current = self.session.state.document_filter
        chosen = await self.push_screen_wait(FilterScreen(self._picks, current.pairs if current else ()))
        if chosen is not None:
            self._apply_filter(chosen)

    def _apply_filter(self, pairs: list[Pair]) -> None:
        self.session.state.document_filter = DocumentFilter(tuple(pairs)) if pairs else None
        self._note(self._show_filter() + ".")

    def _show_filter(self) -> str:
        current = self.session.state.document_filter
        summary = filter_summary(current.pairs if current else None, self._picks or [])
        self.query_one("#filter-status", Static).update(summary)
        return summary

    def on_list_view_selected(self, event: ListView.Selected) -> None:
        self._ground(event.item)

    def action_show_grounding(self) -> None:
        pane = self.query_one("#citations", ListView)
        self._ground(pane.highlighted_child)

    def _ground(self, item: ListItem | None) -> None:
        if not isinstance(item, CitationItem):
            self.notify("No citation yet: ask a question first.")
            return
        self.push_screen(
            TextScreen(
                # A terminal shows no page image; the CLI draws a PDF chunk on its stored page.
                f"Grounding: the cited text and its pages (`haiku-rag visualize {item.citation.chunk_id}` "
                "draws a PDF chunk on its page)",
                grounding_text(item.citation, label=item.labelled),
                id="grounding",
            )
        )

    @work(group="dialog", exclusive=True)
    async def action_database_info(self) -> None:
        try:
            infos = await database_infos(self.client)
        except QUESTION_ERRORS as exc:
            self._note(f"Error: {exc}")
            return
        self.push_screen(TextScreen("Database info", "\n\n".join(info_text(i) for i in infos), id="info"))
