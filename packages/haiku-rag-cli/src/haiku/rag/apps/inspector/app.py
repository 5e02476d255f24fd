"""The inspector's Textual application (docs/cli.md, "inspect").

Panes, top to bottom and left to right: databases → documents (filtered by
text) → chunks → the selected chunk (content, headings, pages) → its page.
Every read goes through the ``Catalog`` and runs in a worker, so the first
screen paints before any database has opened; a read that fails is shown in
place and the app carries on.
"""

from __future__ import annotations

import sys
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.driver import Driver
from textual.widgets import DataTable, Footer, Header, Input, OptionList, Static
from textual.widgets.option_list import Option

from haiku.core.models import Chunk, Document, SearchResult
from haiku.rag.apps.inspector.catalog import READ_ERRORS, Catalog, DatabaseEntry, document_matches
from haiku.rag.apps.inspector.dialogs import HELP, PagesDialog, SearchDialog, TextDialog
from haiku.rag.apps.inspector.document_table import DocumentTable
from haiku.rag.apps.inspector.render import chunk_line, chunk_text, database_line, page_text, report_text
from haiku.rag.apps.inspector.workers import read_worker, unless_closing

COUNT_BATCH = 1000  # documents whose chunks one read counts


class InspectorApp(App[None]):
    """Browse the databases of a client's scope, read-only."""

    CSS_PATH = Path(__file__).with_name("inspector.tcss")
    TITLE = "haiku-rag inspect"
    BINDINGS = [
        Binding("slash", "search", "Search"),
        Binding("f", "filter", "Filter"),
        Binding("c", "context", "Context"),
        Binding("v", "pages", "Pages"),
        Binding("i", "info", "Info"),
        Binding("question_mark", "help", "Help"),
        Binding("q", "quit", "Quit"),
        Binding("escape", "leave_filter", show=False),
    ]

    def __init__(self, catalog: Catalog, *, exit_after_first_screen: bool = False) -> None:
        super().__init__()
        self.catalog = catalog
        self.entries = catalog.databases()
        self.entry: DatabaseEntry | None = None
        self.documents: list[Document] = []
        self.document: Document | None = None
        self.chunks: list[Chunk] = []
        self.chunk: Chunk | None = None
        self.scores: dict[tuple[str | None, str | None], float] = {}
        self.pending: SearchResult | None = None
        self.exit_after_first_screen = exit_after_first_screen

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver, except in a Linux or macOS terminal: there, one that quits without a pause."""
        driver = super().get_driver_class()
        if sys.platform == "win32":
            return driver
        from textual.drivers.linux_driver import LinuxDriver

        from haiku.rag.apps.inspector.driver import InspectorDriver

        return InspectorDriver if driver is LinuxDriver else driver  # not the browser's (--serve)

    # --- layout ----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="top"):
            databases = OptionList(*(Option(database_line(e)) for e in self.entries), id="databases")
            databases.border_title = "Databases"
            yield databases
            with Vertical(id="documents-pane") as documents:
                documents.border_title = "Documents"
                yield Input(placeholder="filter by title, URI or id (f)", id="document-filter")
                yield DocumentTable(id="documents")
        with Horizontal(id="bottom"):
            chunks = OptionList(id="chunks")
            chunks.border_title = "Chunks"
            yield chunks
            with VerticalScroll(id="chunk-pane") as chunk:
                chunk.border_title = "Chunk"
                yield Static(Text("Select a document.", style="dim"), id="chunk-text")
            with VerticalScroll(id="page-pane") as page:
                page.border_title = "Page"
                yield Static(Text(""), id="page-view")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = f"read-only · {len(self.entries)} database{'s' if len(self.entries) != 1 else ''}"
        databases = self.query_one("#databases", OptionList)
        databases.focus()
        if self.entries:
            databases.highlighted = 0

    # --- databases -------------------------------------------------------------------------

    @on(OptionList.OptionHighlighted, "#databases")
    def _database_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self.open_database(self.entries[event.option_index])

    def open_database(self, entry: DatabaseEntry) -> None:
        if entry == self.entry and self.documents:
            self._follow_pending()
            return
        self.entry = entry
        self.documents = []
        self.query_one("#documents-pane").border_title = f"Documents of {entry.heading}"
        self.query_one("#documents", DocumentTable).forget_rows()
        self._show_chunks(None, [])
        self.load_documents(entry)

    @read_worker("documents")
    async def load_documents(self, entry: DatabaseEntry) -> None:
        pane = self.query_one("#documents-pane")
        pane.border_subtitle = "opening…"
        try:
            documents = await self.catalog.documents(entry)
        except READ_ERRORS as exc:
            pane.border_subtitle = ""
            self._show_error(f"Error: {exc}")
            self._first_screen_painted()
            return
        if entry != self.entry:
            return
        self.documents = documents
        self._fill_documents()
        self._first_screen_painted()
        self._follow_pending()

    def _first_screen_painted(self) -> None:
        if self.exit_after_first_screen:
            self.exit_after_first_screen = False
            self.call_after_refresh(self.exit)

    def _show_error(self, message: str) -> None:
        self.pending = None  # a jump stops at a read that failed
        self.query_one("#chunk-text", Static).update(Text(message, style="red"))
        self.notify(message, severity="error", timeout=8)

    # --- documents -------------------------------------------------------------------------

    def shown_documents(self) -> list[Document]:
        text = self.query_one("#document-filter", Input).value
        return [d for d in self.documents if document_matches(d, text)]

    def _fill_documents(self) -> None:
        """List the shown documents, then count the chunks of those not counted yet."""
        table = self.query_one("#documents", DocumentTable)
        shown = self.shown_documents()
        table.show(shown)
        pane = self.query_one("#documents-pane")
        total = len(self.documents)
        pane.border_subtitle = f"{len(shown)} of {total}" if len(shown) != total else f"{total}"
        if not shown:
            self._show_chunks(None, [])
            self.query_one("#chunk-text", Static).update(Text("No documents.", style="dim"))
        # Counted once the listing is on screen: the first screen waits on no count.
        uncounted = table.uncounted(shown)
        if uncounted and self.entry is not None:
            self.call_after_refresh(self.count_chunks, self.entry, uncounted)

    @read_worker("counts")
    async def count_chunks(self, entry: DatabaseEntry, documents: list[Document]) -> None:
        """The documents' chunk counts, filled in a read per slice (the first screenful first)."""
        by_id = {document.id: document for document in documents if document.id is not None}
        ids = list(by_id)
        for start in range(0, len(ids), COUNT_BATCH):
            try:
                counts = await self.catalog.chunk_counts(entry, ids[start : start + COUNT_BATCH])
            except READ_ERRORS:
                return
            if entry != self.entry:
                return  # another database is shown now
            table = self.query_one("#documents", DocumentTable)
            for document_id, count in counts.items():
                table.set_count(by_id[document_id], count)

    @on(Input.Changed, "#document-filter")
    def _filter_changed(self) -> None:
        self._fill_documents()

    @on(Input.Submitted, "#document-filter")
    def _filter_submitted(self) -> None:
        self.query_one("#documents", DataTable).focus()

    @on(DataTable.RowHighlighted, "#documents")
    def _document_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if self.pending is not None and self.pending.document_id != event.row_key.value:
            return  # a row passed on the way to a search hit
        document = next((d for d in self.documents if d.id == event.row_key.value), None)
        if document is not None:
            self.open_document(document)

    def open_document(self, document: Document) -> None:
        if self.document is not None and document.id == self.document.id and self.chunks:
            self._follow_pending()
            return
        # Until its chunks load, the chunks held are another document's: a jump that looked at them
        # now would find its chunk missing and give up.
        self.document, self.chunks = document, []
        self.load_chunks(document)

    @read_worker("chunks")
    async def load_chunks(self, document: Document) -> None:
        entry = self.entry
        if entry is None or document.id is None:
            return
        try:
            chunks = await self.catalog.chunks(entry, document.id)
        except READ_ERRORS as exc:
            self._show_error(f"Error: {exc}")
            return
        if self.document is None or self.document.id != document.id:
            return
        self.query_one("#documents", DocumentTable).set_count(document, len(chunks))
        self._show_chunks(document, chunks)
        self._follow_pending()

    # --- chunks ----------------------------------------------------------------------------

    def _show_chunks(self, document: Document | None, chunks: list[Chunk]) -> None:
        self.document = document
        self.chunks = chunks
        self.chunk = None
        listing = self.query_one("#chunks", OptionList)
        listing.clear_options()
        listing.add_options(Option(chunk_line(c), id=c.id) for c in chunks)
        listing.border_title = f"Chunks of {document.title or document.uri}" if document is not None else "Chunks"
        self.query_one("#chunk-text", Static).update(
            Text("This document has no chunks." if document is not None else "Select a document.", style="dim")
        )
        self.query_one("#page-view", Static).update(Text(""))
        if chunks:
            listing.highlighted = 0

    @on(OptionList.OptionHighlighted, "#chunks")
    @unless_closing  # the list highlights its first chunk once filled, maybe as the app closes
    def _chunk_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if 0 <= event.option_index < len(self.chunks):
            self.show_chunk(self.chunks[event.option_index])

    def show_chunk(self, chunk: Chunk) -> None:
        self.chunk = chunk
        self.query_one("#chunk-text", Static).update(chunk_text(chunk))
        self.load_page(chunk)

    @read_worker("page")
    async def load_page(self, chunk: Chunk) -> None:
        """The page pane: where the chunk lies on its first page (the text stands in for the picture)."""
        entry = self.entry
        if entry is None:
            return
        try:
            views = await self.catalog.pages(entry, chunk)
        except READ_ERRORS as exc:
            self.query_one("#page-view", Static).update(Text(f"Error: {exc}", style="red"))
            return
        if self.chunk is chunk:
            self.query_one("#page-view", Static).update(page_text(views[0], 1, len(views)))

    # --- search and jumps ------------------------------------------------------------------

    def action_search(self) -> None:
        self.push_screen(SearchDialog(self.catalog), self.jump_to)

    def jump_to(self, hit: SearchResult | None) -> None:
        """Select the hit's database, document and chunk (the filter is cleared if it hides it)."""
        if hit is None:
            return
        index = next((i for i, e in enumerate(self.entries) if e.name == hit.source), None)
        if index is None:
            return
        self.pending = hit
        self.scores[(hit.source, hit.chunk_id)] = hit.score
        databases = self.query_one("#databases", OptionList)
        if databases.highlighted == index:
            self.open_database(self.entries[index])
        else:
            databases.highlighted = index

    def _follow_pending(self) -> None:
        """One more step towards the hit being jumped to, once the pane it needs has loaded."""
        hit = self.pending
        if hit is None or self.entry is None or hit.source != self.entry.name:
            return
        if self.document is None or self.document.id != hit.document_id or not self.chunks:
            document = next((d for d in self.documents if d.id == hit.document_id), None)
            if document is None:
                self.pending = None
                return
            filter_box = self.query_one("#document-filter", Input)
            if not document_matches(document, filter_box.value):
                with filter_box.prevent(Input.Changed):
                    filter_box.value = ""
                self._fill_documents()
            table = self.query_one("#documents", DocumentTable)
            table.add_remaining_rows()
            with table.prevent(DataTable.RowHighlighted):
                table.move_cursor(row=table.get_row_index(document.id or ""))
            table.focus()
            self.open_document(document)
            return
        self.pending = None
        position = next((i for i, c in enumerate(self.chunks) if c.id == hit.chunk_id), None)
        if position is not None:
            listing = self.query_one("#chunks", OptionList)
            listing.highlighted = position
            listing.focus()
            self.show_chunk(self.chunks[position])

    # --- dialogs ---------------------------------------------------------------------------

    def _selected_chunk(self) -> tuple[Document, Chunk] | None:
        if self.document is None or self.chunk is None:
            self.notify("Select a chunk first.", severity="warning")
            return None
        return self.document, self.chunk

    def action_context(self) -> None:
        if (selected := self._selected_chunk()) is not None:
            self.show_context(*selected)

    @read_worker("dialog")
    async def show_context(self, document: Document, chunk: Chunk) -> None:
        score = self.scores.get((chunk.source, chunk.id), 0.0)
        try:
            text = await self.catalog.context(document, chunk, score)
        except READ_ERRORS as exc:
            self._show_error(f"Error: {exc}")
            return
        self.push_screen(TextDialog(f"Context the model gets for chunk #{chunk.order}", text))

    def action_pages(self) -> None:
        if (selected := self._selected_chunk()) is not None:
            self.show_pages(*selected)

    @read_worker("dialog")
    async def show_pages(self, document: Document, chunk: Chunk) -> None:
        if self.entry is None:
            return
        try:
            views = await self.catalog.pages(self.entry, chunk)
        except READ_ERRORS as exc:
            self._show_error(f"Error: {exc}")
            return
        title = f"Visual grounding of chunk #{chunk.order} of {document.title or document.uri}"
        self.push_screen(PagesDialog(title, views))

    def action_info(self) -> None:
        if self.entry is not None:
            self.show_info(self.entry)

    @read_worker("dialog")
    async def show_info(self, entry: DatabaseEntry) -> None:
        try:
            report = await self.catalog.report(entry)
        except READ_ERRORS as exc:
            self._show_error(f"Error: {exc}")
            return
        self.push_screen(TextDialog(f"Database {entry.heading}", report_text(report)))

    def action_help(self) -> None:
        self.push_screen(TextDialog("Keys", HELP))

    def action_filter(self) -> None:
        self.query_one("#document-filter", Input).focus()

    def action_leave_filter(self) -> None:
        if self.focused is self.query_one("#document-filter", Input):
            self.query_one("#documents", DataTable).focus()
