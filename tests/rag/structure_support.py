"""Documents with real structure for the structure tests, and ingesting them as an operator would.

``field_guide_pdf`` builds, with reportlab, a three-page PDF laid out as a
published report is: a title, numbered section headings, body text in one
column then two, a ruled table and a figure with its caption. ``field_guide_docx``
and ``field_guide_markdown`` hold the same sections in formats whose headings
docling reads from the file itself.
"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path
from typing import Any

from support import cli_env, write_config

INGESTER = Path(sys.executable).parent / "haiku-ingester"

TITLE = "Wetland Field Guide"
SECTIONS: list[tuple[str, list[str]]] = [
    (
        "1 Reed beds",
        [
            "Reed beds filter nutrients from slow water and shelter warblers through the breeding season.",
            "Cutting a reed bed in rotation keeps it young: one fifth of the stand each winter is enough.",
        ],
    ),
    (
        "2 Tidal mudflats",
        [
            "Mudflats feed wading birds twice a day when the tide uncovers worms and small snails.",
            "Curlews probe deep with long bills while plovers pick prey from the surface by sight.",
            "Bait digging disturbs the roosts, so surveys count birds on the rising tide only.",
            *(
                f"Transect {n} crosses the flat from the sea wall to the low water mark; observers walk it "
                f"in pairs, note every flock of waders within fifty metres and record the state of the tide "
                f"at the start and at the end of the walk, so counts from different days compare."
                for n in range(1, 21)
            ),
        ],
    ),
    (
        "3 Survey counts",
        [
            "The counts below come from the spring survey of the northern estuary.",
        ],
    ),
]
TABLE_ROWS = [
    ["Species", "March", "April", "May"],
    ["Curlew", "412", "388", "140"],
    ["Dunlin", "2310", "1875", "96"],
    ["Redshank", "655", "602", "311"],
]
FIGURE_CAPTION = "Figure 1: Estuary map with the three survey transects."
UNIQUE = {
    "reeds": "Cutting a reed bed in rotation keeps it young",
    "mudflats": "Curlews probe deep with long bills",
    "counts": "The counts below come from the spring survey",
}


def _figure_png() -> bytes:
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (480, 300), (214, 234, 248))
    pen = ImageDraw.Draw(image)
    pen.polygon([(0, 210), (140, 160), (300, 190), (480, 130), (480, 300), (0, 300)], fill=(120, 170, 110))
    for x in (110, 240, 370):
        pen.line([(x, 20), (x, 280)], fill=(200, 40, 40), width=6)
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def field_guide_pdf() -> bytes:
    """The guide as a PDF: pages 1 and 2 in one column (the title, sections 1 and 2, section 2
    running over the page break), page 3 in two (section 3, its table, the figure and its caption)."""
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.lib.units import cm
    from reportlab.platypus import (
        BaseDocTemplate,
        Frame,
        FrameBreak,
        Image,
        NextPageTemplate,
        PageBreak,
        PageTemplate,
        Paragraph,
        Spacer,
        Table,
        TableStyle,
    )

    styles = getSampleStyleSheet()
    out = io.BytesIO()
    doc = BaseDocTemplate(out, pagesize=A4, title=TITLE, author="haiku tests")
    width, height = A4
    margin = 2 * cm
    full = Frame(margin, margin, width - 2 * margin, height - 2 * margin, id="full")
    column = (width - 2 * margin - cm) / 2
    left = Frame(margin, margin, column, height - 2 * margin, id="left")
    right = Frame(margin + column + cm, margin, column, height - 2 * margin, id="right")
    doc.addPageTemplates([PageTemplate("one", [full]), PageTemplate("two", [left, right])])

    story: list[Any] = [Paragraph(TITLE, styles["Title"]), Spacer(1, 12)]
    for heading, paragraphs in SECTIONS[:2]:
        story.append(Paragraph(heading, styles["Heading1"]))
        story += [Paragraph(text, styles["BodyText"]) for text in paragraphs]
    story += [NextPageTemplate("two"), PageBreak()]
    heading, paragraphs = SECTIONS[2]
    story.append(Paragraph(heading, styles["Heading1"]))
    story += [Paragraph(text, styles["BodyText"]) for text in paragraphs]
    table = Table(TABLE_ROWS)
    table.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.5, colors.black), ("FONTNAME", (0, 0), (-1, 0), "Helvetica-Bold")]))
    story += [Spacer(1, 8), table, FrameBreak()]
    story += [Image(io.BytesIO(_figure_png()), width=column, height=column * 300 / 480)]
    story.append(Paragraph(FIGURE_CAPTION, styles["Italic"]))
    doc.build(story)
    return out.getvalue()


def field_guide_markdown() -> str:
    parts = [f"# {TITLE}"]
    for heading, paragraphs in SECTIONS:
        parts.append(f"## {heading}")
        parts += paragraphs
    table = ["| " + " | ".join(row) + " |" for row in TABLE_ROWS]
    table.insert(1, "|" + "---|" * len(TABLE_ROWS[0]))
    parts.append("\n".join(table))
    return "\n\n".join(parts) + "\n"


def field_guide_docx() -> bytes:
    from docx import Document

    document = Document()
    document.add_heading(TITLE, level=0)
    for heading, paragraphs in SECTIONS:
        document.add_heading(heading, level=1)
        for text in paragraphs:
            document.add_paragraph(text)
    table = document.add_table(rows=len(TABLE_ROWS), cols=len(TABLE_ROWS[0]))
    for r, row in enumerate(TABLE_ROWS):
        for c, text in enumerate(row):
            table.cell(r, c).text = text
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def ingest_folder(root: Path, folder: Path, name: str = "guides", **sections: Any) -> Path:
    """Run ``haiku-ingester run-batch`` over ``folder`` into database ``name``; the config's path."""
    data: dict[str, Any] = {
        "storage": {"data_dir": str(root / "data"), "auto_vacuum": False},
        "lancedb": {"databases": {name: str(root / f"{name}.lancedb")}},
        "ingester": {
            "databases": {name: {"sources": [{"type": "fs", "root": str(folder), "id": name}]}},
            "workers": {"worker_count": 1},
        },
    }
    for key, value in sections.items():
        data.setdefault(key, {}).update(value)
    config = write_config(root / "haiku.rag.yaml", data)
    done = subprocess.run(
        [str(INGESTER), "--config", str(config), "run-batch"],
        capture_output=True, text=True, env=cli_env(), timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return config


def phrase_box(pdf: bytes | Path, phrase: str) -> tuple[int, tuple[float, float, float, float]]:
    """Where ``phrase`` is printed: its page and its box in page points from the top left,
    as the PDF's own text layer places it (pypdfium2), independent of the converter."""
    import pypdfium2

    document = pypdfium2.PdfDocument(pdf if isinstance(pdf, Path) else io.BytesIO(pdf))
    try:
        for index in range(len(document)):
            page = document[index]
            text = page.get_textpage()
            found = text.search(phrase).get_next()
            if found is None:
                continue
            start, count = found
            boxes = [text.get_charbox(i) for i in range(start, start + count)]
            height = page.get_height()
            left, bottom = min(b[0] for b in boxes), min(b[1] for b in boxes)
            right, top = max(b[2] for b in boxes), max(b[3] for b in boxes)
            return index + 1, (left, height - top, right, height - bottom)
    finally:
        document.close()
    raise AssertionError(f"{phrase!r} is not in the PDF")


def inside(inner: tuple[float, float, float, float], boxes: list[Any], page: int, slack: float = 2.0) -> bool:
    """Whether the box ``inner`` lies within the union of the ``boxes`` on ``page`` (within ``slack`` points)."""
    mine = [b for b in boxes if b.page == page]
    if not mine:
        return False
    left, top = min(b.left for b in mine), min(b.top for b in mine)
    right, bottom = max(b.right for b in mine), max(b.bottom for b in mine)
    return (
        inner[0] >= left - slack and inner[1] >= top - slack and inner[2] <= right + slack and inner[3] <= bottom + slack
    )
