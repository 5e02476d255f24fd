"""A PDF with real structure, made with reportlab: what the PDF layout step must find.

Three pages, each with a running header and a page-number footer; a title and
sections in two heading sizes; a table ruled as a grid; a figure (an embedded
bitmap) with its caption; and on the last page two columns of text side by side.
"""

from __future__ import annotations

import io

TITLE = "Shorebird Survey Methods"
SECTIONS = ["Counting at high tide", "Recording the flocks", "Results by site"]
SUBSECTIONS = ["Choosing a vantage point", "Flock size estimates"]
RUNNING_HEADER = "Coastal Bird Observatory annual report"
TABLE = [["Site", "Species", "Count"], ["North spit", "Dunlin", "412"], ["Salt marsh", "Redshank", "87"],
         ["Harbour", "Turnstone", "35"]]
CAPTION = "Figure 1: Flock positions on the north spit."
LEFT_COLUMN = "Left column observers walked the dune transect counting sanderlings along the tide line."
RIGHT_COLUMN = "Right column observers watched the estuary mouth where oystercatchers gather before dusk."

_BODY = (
    "Observers count the birds that roost on the shingle while the water is high, because the flocks are "
    "packed close together and move little until the tide turns again. "
)


def _figure_png() -> bytes:
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (480, 240), (235, 245, 250))
    draw = ImageDraw.Draw(image)
    for i in range(12):
        draw.ellipse((20 + 36 * i, 60 + (i % 3) * 40, 44 + 36 * i, 84 + (i % 3) * 40), fill=(40, 60, 120))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def structured_pdf() -> bytes:
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
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

    width, height = A4
    body = ParagraphStyle("body", fontName="Helvetica", fontSize=10, leading=13, spaceAfter=8)
    h1 = ParagraphStyle("h1", fontName="Helvetica-Bold", fontSize=20, leading=24, spaceBefore=12, spaceAfter=12)
    h2 = ParagraphStyle("h2", fontName="Helvetica-Bold", fontSize=15, leading=18, spaceBefore=10, spaceAfter=8)
    h3 = ParagraphStyle("h3", fontName="Helvetica-Bold", fontSize=12.5, leading=15, spaceBefore=8, spaceAfter=6)
    caption = ParagraphStyle("caption", fontName="Helvetica-Oblique", fontSize=9, leading=11, spaceAfter=10)

    def furniture(canvas, document) -> None:
        canvas.saveState()
        canvas.setFont("Helvetica", 8)
        canvas.drawString(2 * cm, height - 1.2 * cm, RUNNING_HEADER)
        canvas.drawCentredString(width / 2, 1.2 * cm, str(document.page))
        canvas.restoreState()

    margin = 2.5 * cm
    full = Frame(margin, margin, width - 2 * margin, height - 2 * margin, id="full")
    half = (width - 2 * margin - 1 * cm) / 2
    left = Frame(margin, margin, half, height - 2 * margin, id="left")
    right = Frame(margin + half + 1 * cm, margin, half, height - 2 * margin, id="right")
    out = io.BytesIO()
    document = BaseDocTemplate(out, pagesize=A4, title="untitled")
    document.addPageTemplates([
        PageTemplate(id="one", frames=[full], onPage=furniture),
        PageTemplate(id="two", frames=[left, right], onPage=furniture),
    ])
    story = [Paragraph(TITLE, h1), Paragraph(_BODY * 3, body), Paragraph(SECTIONS[0], h2), Paragraph(_BODY * 4, body)]
    story += [Paragraph(SUBSECTIONS[0], h3), Paragraph(_BODY * 5, body), Paragraph(SUBSECTIONS[1], h3)]
    story += [Paragraph(_BODY * 4, body), PageBreak(), Paragraph(SECTIONS[1], h2), Paragraph(_BODY * 2, body)]
    table = Table(TABLE, colWidths=[5 * cm, 5 * cm, 3 * cm])
    table.setStyle(TableStyle([
        ("GRID", (0, 0), (-1, -1), 0.5, colors.black),
        ("FONTNAME", (0, 0), (-1, 0), "Helvetica-Bold"),
        ("FONTNAME", (0, 1), (-1, -1), "Helvetica"),
        ("FONTSIZE", (0, 0), (-1, -1), 10),
    ]))
    story += [Spacer(1, 12), table, Spacer(1, 18), Paragraph(_BODY * 2, body)]
    story += [Image(io.BytesIO(_figure_png()), width=12 * cm, height=6 * cm), Paragraph(CAPTION, caption)]
    story += [Paragraph(_BODY * 2, body), NextPageTemplate("two"), PageBreak(), Paragraph(SECTIONS[2], h2)]
    story += [Paragraph((LEFT_COLUMN + " ") * 1 + _BODY * 6, body), FrameBreak()]
    story += [Paragraph((RIGHT_COLUMN + " ") * 1 + _BODY * 6, body)]
    document.build(story)
    return out.getvalue()
