"""A paper's results page made with reportlab: what the PDF table reading must get right.

A section opens with a paragraph; a figure drawn with vector paths (a chart's
gridlines with tick labels, a pipeline of boxes joined by lines, curve labels
scattered over the chart); then a results table set the way papers set them,
without rules between its columns (booktabs: a rule above, below the header
and at the foot), numbers centred, a header of two rows with each collection's
name spanning its two measures, and a model's name wrapped on two lines. A second page holds a table set tight
(columns a few points apart) between three rules and nothing else, as LaTeX's
booktabs sets it, which the layout model does not box as a table.
"""

from __future__ import annotations

import io

FIGURE_LABELS = ["Tokenizer", "Encoder", "Pooling", "Index", "Reranker", "baseline", "dense", "sparse", "hybrid"]
HEADER = [["Model", "Collection A", "", "Collection B", ""], ["", "nDCG@10", "Recall@100", "nDCG@10", "Recall@100"]]
RESULTS = [
    ["BM25", "0.413", "0.662", "0.298", "0.571"],
    ["Dense retriever", "0.452", "0.701", "0.331", "0.604"],
    ["Hybrid (ours)", "0.487", "0.743", "0.359", "0.648"],
    ["Hybrid + rerank\nwith cross-encoder", "0.512", "0.760", "0.372", "0.655"],
]
_BODY = (
    "We compare three retrieval models on two collections. Each model is trained on the same split and "
    "evaluated with the same protocol, and the numbers below are the means of five runs. "
)


def diagram():
    """A chart's gridlines and tick labels, a pipeline of boxes over it, and labels scattered on it."""
    from reportlab.graphics.shapes import Drawing, Line, Rect, String
    from reportlab.lib import colors

    drawing = Drawing(440, 260)
    for i in range(6):
        y = 20 + i * 36
        drawing.add(Line(40, y, 420, y, strokeColor=colors.grey, strokeWidth=0.4))
        drawing.add(String(14, y - 3, f"{i * 20}", fontSize=7))
    for j in range(8):
        x = 40 + j * 54
        drawing.add(Line(x, 20, x, 200, strokeColor=colors.grey, strokeWidth=0.4))
        drawing.add(String(x - 6, 8, f"{2016 + j}", fontSize=7))
    for k, label in enumerate(FIGURE_LABELS[:5]):
        x = 50 + k * 76
        drawing.add(Rect(x, 215, 64, 26, fillColor=None, strokeColor=colors.black, strokeWidth=0.8))
        drawing.add(String(x + 5, 225, label, fontSize=8))
        if k:
            drawing.add(Line(x - 12, 228, x, 228, strokeWidth=0.8))
    for (x, y), label in zip([(60, 120), (200, 150), (310, 90), (120, 60)], FIGURE_LABELS[5:], strict=True):
        drawing.add(String(x, y, label, fontSize=7))
    return drawing


def results_pdf() -> bytes:
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

    styles = getSampleStyleSheet()
    table = Table(HEADER + RESULTS, colWidths=[110, 62, 68, 62, 68])
    table.setStyle(TableStyle([
        ("SPAN", (1, 0), (2, 0)), ("SPAN", (3, 0), (4, 0)), ("SPAN", (0, 0), (0, 1)),
        ("ALIGN", (1, 0), (-1, -1), "CENTER"), ("VALIGN", (0, 0), (0, 1), "MIDDLE"), ("FONTSIZE", (0, 0), (-1, -1), 9),
        ("LINEABOVE", (0, 0), (-1, 0), 1, colors.black), ("LINEBELOW", (0, 1), (-1, 1), 0.5, colors.black),
        ("LINEBELOW", (0, -1), (-1, -1), 1, colors.black),
        ("TOPPADDING", (0, 0), (-1, -1), 1), ("BOTTOMPADDING", (0, 0), (-1, -1), 1),
    ]))
    story = [
        Paragraph("4 Experiments", styles["Heading2"]), Paragraph(_BODY * 3, styles["BodyText"]), Spacer(1, 10),
        diagram(), Paragraph("Figure 3: The retrieval pipeline over the years of the benchmark.", styles["BodyText"]),
        Spacer(1, 14), Paragraph("Table 2: Retrieval quality on the two collections.", styles["BodyText"]),
        Spacer(1, 4), table, Spacer(1, 14), Paragraph(_BODY * 2, styles["BodyText"]),
    ]
    out = io.BytesIO()
    SimpleDocTemplate(out, pagesize=A4).build(story)
    return out.getvalue()


TIGHT = [
    ["Method", "Params", "MNLI", "QQP", "SST-2", "Avg."],
    ["BERT-base", "110M", "84.6", "71.2", "93.5", "83.1"],
    ["RoBERTa-base", "125M", "87.6", "91.9", "94.8", "91.4"],
    ["DistilBERT", "66M", "82.2", "88.5", "91.3", "87.3"],
    ["TinyBERT (ours)", "14.5M", "82.5", "89.2", "92.6", "88.1"],
    ["ALBERT-large", "18M", "81.6", "-", "90.3", "-"],
]


def booktabs_pdf() -> bytes:
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

    styles = getSampleStyleSheet()
    table = Table(TIGHT)
    table.setStyle(TableStyle([
        ("ALIGN", (1, 0), (-1, -1), "RIGHT"), ("FONTSIZE", (0, 0), (-1, -1), 9),
        ("LEFTPADDING", (0, 0), (-1, -1), 2.5), ("RIGHTPADDING", (0, 0), (-1, -1), 2.5),
        ("TOPPADDING", (0, 0), (-1, -1), 0.5), ("BOTTOMPADDING", (0, 0), (-1, -1), 0.5),
        ("LINEABOVE", (0, 0), (-1, 0), 1, colors.black), ("LINEBELOW", (0, 0), (-1, 0), 0.5, colors.black),
        ("LINEBELOW", (0, -1), (-1, -1), 1, colors.black),
    ]))
    body = "Distillation keeps most of the accuracy of the teacher at a fraction of its size, as the table shows. "
    story = [
        Paragraph("5 Results", styles["Heading2"]), Paragraph(body * 4, styles["BodyText"]), Spacer(1, 8),
        Paragraph("Table 3: GLUE dev results.", styles["BodyText"]), table, Spacer(1, 8),
        Paragraph(body * 4, styles["BodyText"]),
    ]
    out = io.BytesIO()
    SimpleDocTemplate(out, pagesize=A4).build(story)
    return out.getvalue()
