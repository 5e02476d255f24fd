"""The inspector's dialogs: a text panel (context, info, help), the pages of a chunk, the search.

Each is a modal screen over the panes; Escape closes it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from haiku.rag.apps.inspector.catalog import READ_ERRORS
from haiku.rag.apps.inspector.render import hit_line, page_text
from haiku.rag.apps.inspector.workers import read_worker

if TYPE_CHECKING:
    from haiku.core.models import SearchResult
    from haiku.rag.apps.inspector.catalog import Catalog, PageView

HELP = """Panes (Tab / Shift+Tab moves between them; arrows move within one)
  databases   the scope's databases; a tagged one is read at its tag
  documents   title, URI, dates, chunk count; f or the box above filters by text
  chunks      the selected document's chunks; the chunk pane shows its content,
              headings and pages, the page pane where it lies on its page

Keys
  /        search the databases and jump to a hit
  f        filter the documents (Escape returns to the list)
  c        the context the model gets for the selected chunk (after expansion)
  v        the selected chunk's visual grounding, page by page (←/→ turn pages)
  i        the selected database's report: embedder, counts, versions, tags
  ?        this help
  q        quit (Escape closes a dialog)

Everything is read-only: the inspector never writes a database."""


class TextDialog(ModalScreen[None]):
    """A titled, scrolling text panel."""

    BINDINGS = [Binding("escape,q", "dismiss", "Close")]

    def __init__(self, title: str, body: Text | str, *, name: str | None = None) -> None:
        super().__init__(name=name)
        self.heading = title
        self.body = body if isinstance(body, Text) else Text(body)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as box:
            box.border_title = self.heading
            box.border_subtitle = "Esc closes"
            with VerticalScroll():
                yield Static(self.body, id="dialog-body")

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)


class PagesDialog(ModalScreen[None]):
    """A chunk's visual grounding, one page at a time."""

    BINDINGS = [
        Binding("escape,q", "dismiss", "Close"),
        Binding("right,n,pagedown", "turn(1)", "Next page"),
        Binding("left,p,pageup", "turn(-1)", "Previous page"),
    ]

    def __init__(self, title: str, views: list[PageView]) -> None:
        super().__init__()
        self.heading = title
        self.views = views
        self.position = 0

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as box:
            box.border_title = self.heading
            box.border_subtitle = "←/→ pages · Esc closes"
            with VerticalScroll():
                yield Static(self._page(), id="dialog-body")

    def _page(self) -> Text:
        return page_text(self.views[self.position], self.position + 1, len(self.views))

    def action_turn(self, step: int) -> None:
        self.position = (self.position + step) % len(self.views)
        self.query_one("#dialog-body", Static).update(self._page())

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)


class SearchDialog(ModalScreen["SearchResult | None"]):
    """Type a query, Enter searches the databases; Enter on a hit jumps to it."""

    BINDINGS = [Binding("escape", "dismiss", "Close")]

    def __init__(self, catalog: Catalog) -> None:
        super().__init__()
        self.catalog = catalog
        self.hits: list[SearchResult] = []

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as box:
            box.border_title = "Search " + ", ".join(e.heading for e in self.catalog.databases())
            box.border_subtitle = "Enter searches · ↓ then Enter jumps · Esc closes"
            yield Input(placeholder="search the documents", id="search-query")
            yield Static("", id="search-status")
            yield OptionList(id="search-hits")

    def on_mount(self) -> None:
        self.query_one("#search-query", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        query = event.value.strip()
        if query:
            self.query_one("#search-status", Static).update(Text(f"searching for {query!r}…"))
            self.run_search(query)

    @read_worker("search")
    async def run_search(self, query: str) -> None:
        status = self.query_one("#search-status", Static)
        hits = self.query_one("#search-hits", OptionList)
        try:
            self.hits = await self.catalog.search(query)
        except READ_ERRORS as exc:
            status.update(Text(f"Error: {exc}", style="red"))
            return
        label = len(self.catalog.databases()) > 1
        hits.clear_options()
        hits.add_options(Option(hit_line(hit, label)) for hit in self.hits)
        status.update(Text(f"{len(self.hits)} hits for {query!r}" if self.hits else f"nothing found for {query!r}"))
        if self.hits:
            hits.highlighted = 0
            hits.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.hits[event.option_index])

    async def action_dismiss(self, result: SearchResult | None = None) -> None:
        self.dismiss(result)
