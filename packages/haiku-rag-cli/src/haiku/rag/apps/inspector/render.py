"""How the inspector words what it shows, as Rich ``Text`` (never markup: stored text may hold brackets).

Plain functions from the catalog's values to text, so the panes and dialogs
share one wording and the tests can read it back.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from rich.text import Text

from haiku.core.processing_identity import describe_recorded
from haiku.rag.client import reprocess_command

if TYPE_CHECKING:
    from haiku.core.models import Chunk, SearchResult
    from haiku.rag.apps.inspector.catalog import DatabaseEntry, DatabaseReport, PageView

# What the page pane says of the page's image (a terminal shows none: the text on the page stands in).
NO_PAGE_LAYOUT = "No page layout stored for this chunk, so no page image to draw it on: the text on the page stands in."
PAGE_IMAGE_STORED = (
    "The page image is stored: `haiku-rag visualize {chunk_id}` draws the chunk on it. "
    "Here the text on the page stands in."
)
PDFS_ONLY = "No page image: page images are stored for PDFs only, and this is a {kind} document. The text on the page stands in."
PDF_WITHOUT_IMAGES = (
    "No page image stored for this page (processing.page_images was off when the document was ingested, "
    "or it was stored before the database kept page images): the text on the page stands in."
)


def when(value: datetime) -> str:
    return value.strftime("%Y-%m-%d %H:%M")


def pages_label(pages: list[int]) -> str:
    if not pages:
        return "—"
    return ", ".join(str(p) for p in pages)


def database_line(entry: DatabaseEntry) -> Text:
    line = Text(entry.heading, style="bold")
    if entry.tag is not None:
        line.append("  read-only at the tag", style="dim")
    return line


def chunk_line(chunk: Chunk, width: int = 48) -> Text:
    first = " ".join(chunk.content.split())
    line = Text(f"#{chunk.order:<3} ", style="bold")
    if chunk.page_numbers:
        line.append(f"p.{pages_label(chunk.page_numbers)} ", style="cyan")
    line.append(first[:width] + ("…" if len(first) > width else ""))
    return line


def chunk_text(chunk: Chunk) -> Text:
    text = Text()
    text.append(f"Chunk #{chunk.order}", style="bold")
    text.append(f"  {chunk.id}\n", style="dim")
    text.append("Headings: ", style="bold")
    text.append((" > ".join(chunk.headings) if chunk.headings else "—") + "\n")
    text.append("Pages: ", style="bold")
    text.append(pages_label(chunk.page_numbers) + "\n\n")
    text.append(chunk.content)
    return text


def page_text(view: PageView, position: int | None = None, total: int | None = None) -> Text:
    """One page of a chunk's grounding: the picture's place, and the page's text with the chunk marked."""
    text = Text()
    heading = "No page recorded for this chunk" if view.page is None else f"Page {view.page}"
    if position is not None and total is not None:
        heading += f"  ({position} of {total})"
    text.append(heading + "\n", style="bold")
    text.append(page_image_note(view) + "\n", style="dim italic")
    for block in view.blocks:
        text.append("\n")
        if block.selected:
            text.append(f"▶ #{block.order} ", style="bold yellow")
            text.append(block.text, style="reverse")
        else:
            text.append(f"  #{block.order} ", style="dim")
            text.append(block.text, style="dim")
        text.append("\n")
    return text


def page_image_note(view: PageView) -> str:
    """Whether the page is stored as an image, and if not, why (the rule of ``visualize``)."""
    if view.image == "stored":
        return PAGE_IMAGE_STORED.format(chunk_id=view.chunk_id)
    if view.image == "pdfs_only":
        return PDFS_ONLY.format(kind=view.kind)
    if view.image == "not_stored":
        return PDF_WITHOUT_IMAGES
    return NO_PAGE_LAYOUT


def hit_line(hit: SearchResult, label: bool) -> Text:
    line = Text()
    if label and hit.source is not None:
        line.append(f"[{hit.source}] ", style="cyan")
    line.append(hit.document_title or hit.document_uri or hit.document_id or "?", style="bold")
    line.append(f"  {hit.score:.3f}  ", style="dim")
    line.append(" ".join(hit.content.split())[:70])
    return line


def report_text(report: DatabaseReport) -> Text:
    info = report.info
    rows: list[tuple[str, str]] = [
        ("database", str(info.name)),
        ("location", info.configured_location),
        ("read at tag", f"{info.tag} (read-only)" if info.tag else "— (the live database)"),
        ("schema version", f"{info.schema_version} (this code: {info.current_schema_version})"),
    ]
    embedder = info.embedder
    rows.append((
        "embedder",
        f"{embedder['provider']}/{embedder['model']}, {embedder['vector_dim']} dimensions" if embedder else "not recorded",
    ))
    processing = describe_recorded(info.processing, documents=info.documents, reprocess=reprocess_command())
    rows.append(("processing", processing))
    rows.append(("created", info.created_at or "—"))
    rows.append(("documents", str(info.documents)))
    rows.append(("chunks", str(info.chunks)))
    rows.append(("full-text index", "yes" if info.fts_index.get("exists") else "no"))
    rows.append(("vector index", "yes" if info.vector_index.get("exists") else "no"))
    rows.append(("table versions", ", ".join(f"{t} v{v}" for t, v in sorted(info.table_versions.items()))))
    tags = ", ".join(t.name for t in report.tags) if report.tags else "none"
    rows.append(("tags", f"{len(report.tags)}: {tags}" if report.tags else tags))
    text = Text()
    for key, value in rows:
        text.append(f"{key:>16}  ", style="bold")
        text.append(f"{value}\n")
    return text
