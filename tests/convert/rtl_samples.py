"""PDFs of right-to-left text, made with reportlab the way a typesetter lays out bidi text.

reportlab draws a string's glyphs left to right and knows nothing of bidi, as a
PDF does: a typesetter works out each line's visual order itself. Here each line
is cut into runs (a Latin word or a number inside Arabic or Hebrew is a run of
its own); each run is drawn as one string, the glyphs of a right-to-left run
reversed (visual order), and the runs are drawn one after another in reading
order, from the right margin leftwards, so the text layer holds one cell per run.

The font is DejaVu Sans (it has Arabic and Hebrew glyphs), from the opencv wheel
the OCR step installs, or the system's fonts.
"""

from __future__ import annotations

import importlib.util
import io
import re
from pathlib import Path

ARABIC_TITLE = "مقدمة إلى لغة Python للمبتدئين"
ARABIC_LINES = ["هذه وثيقة باللغة العربية تذكر Linux في السطر", "وقد صدر الإصدار 3.12 في عام 2023 وهو سريع."]
HEBREW_LINES = ["זהו מסמך בעברית עם המילה Debian בתוך השורה."]

# A second page of two columns side by side: the right one is read first.
RIGHT_COLUMN = [
    "العمود الأيمن يبدأ الصفحة الثانية",
    "ويكمل القارئ فيه من الأعلى",
    "إلى الأسفل قبل أن ينتقل",
]
LEFT_COLUMN = ["ثم يأتي العمود الأيسر بعده", "فيقرأ القارئ سطوره كلها", "حتى نهاية هذه الصفحة"]

_LTR_RUN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.]*[A-Za-z0-9])?")


def font_file(bold: bool = False) -> Path | None:
    name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
    places = [Path("/usr/share/fonts/truetype/dejavu")]
    spec = importlib.util.find_spec("cv2")
    if spec is not None and spec.origin:
        places.insert(0, Path(spec.origin).parent / "qt" / "fonts")
    return next((place / name for place in places if (place / name).exists()), None)


def visual_runs(line: str) -> list[str]:
    """The runs of a right-to-left line in reading order, each as drawn: Latin words and numbers
    as they are, the right-to-left text between them reversed."""
    runs, start = [], 0
    for match in _LTR_RUN.finditer(line):
        if match.start() > start:
            runs.append(line[start : match.start()][::-1])
        runs.append(match.group())
        start = match.end()
    if start < len(line):
        runs.append(line[start:][::-1])
    return runs


def rtl_pdf() -> bytes:
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.pdfgen import canvas

    pdfmetrics.registerFont(TTFont("DejaVu", str(font_file())))
    pdfmetrics.registerFont(TTFont("DejaVu-Bold", str(font_file(bold=True))))
    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=(595, 842))

    def draw(line: str, right: float, y: float, font: str = "DejaVu", size: float = 11) -> None:
        x = right  # the line's right edge: reading order runs leftwards
        for run in visual_runs(line):
            x -= pdfmetrics.stringWidth(run, font, size)
            pdf.setFont(font, size)
            pdf.drawString(x, y, run)

    draw(ARABIC_TITLE, 540, 760, "DejaVu-Bold", 20)
    for i, line in enumerate(ARABIC_LINES + HEBREW_LINES):
        draw(line, 540, 712 - 15.4 * i)
    pdf.showPage()
    for i, (right, left) in enumerate(zip(RIGHT_COLUMN, LEFT_COLUMN, strict=True)):
        draw(right, 540, 760 - 15.4 * i)
        draw(left, 270, 760 - 15.4 * i)
    pdf.save()
    return out.getvalue()
