"""The chat app's dialogs: the document filter, a citation's grounding, the databases' info."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, SelectionList, Static

from haiku.rag.apps.chat.views import Pickable

Pair = tuple[str | None, str]


class TextScreen(ModalScreen[None]):
    """A titled page of plain text; Esc closes it."""

    BINDINGS = [Binding("escape", "dismiss", "Close")]

    def __init__(self, title: str, text: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.title_text = title
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.title_text, classes="dialog-title")
            with VerticalScroll():
                yield Static(self.text, markup=False, id="text")
            yield Label("Esc closes", classes="hint")


class FilterScreen(ModalScreen[list[Pair] | None]):
    """Pick documents across databases; returns the picked pairs ([] for every document),
    or None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, picks: Sequence[Pickable], chosen: Sequence[Pair]) -> None:
        super().__init__(id="filter")
        self.picks = list(picks)
        self.chosen: set[Pair] = set(chosen)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Filter documents: pick the documents to read (space toggles)", classes="dialog-title")
            yield Input(placeholder="type to narrow the list by title", id="narrow")
            yield SelectionList[Pair](*self._options(""), id="documents")
            with Horizontal(classes="buttons"):
                yield Button("Apply", variant="primary", id="apply")
                yield Button("Every document", id="clear")
                yield Button("Cancel", id="cancel")

    def _options(self, text: str) -> list[tuple[str, Pair, bool]]:
        wanted = text.strip().lower()
        return [(p.label, p.pair, p.pair in self.chosen) for p in self.picks if wanted in p.label.lower()]

    @property
    def documents(self) -> SelectionList[Pair]:
        return self.query_one("#documents", SelectionList)

    def on_input_changed(self, event: Input.Changed) -> None:
        self.documents.clear_options()
        self.documents.add_options(self._options(event.value))

    def on_selection_list_selected_changed(self, event: SelectionList.SelectedChanged) -> None:
        shown = {self.documents.get_option_at_index(i).value for i in range(self.documents.option_count)}
        self.chosen = (self.chosen - shown) | set(self.documents.selected)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.documents.focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "apply":
            self.dismiss([p.pair for p in self.picks if p.pair in self.chosen])
        elif event.button.id == "clear":
            self.dismiss([])
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)
