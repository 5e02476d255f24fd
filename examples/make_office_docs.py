"""Generate the demo's slide deck, spreadsheet and scanned PDF.

Like ``make_binary_docs.py``: the files are committed, so the demo needs none of
python-pptx, openpyxl or Pillow's font rendering at run time; rerun this only
after editing the texts below. Timestamps are fixed, so a rerun leaves git clean.

    .venv/bin/python examples/make_office_docs.py
"""

from __future__ import annotations

import datetime as dt
import io
import re
import zipfile
from pathlib import Path

from make_binary_docs import AUTHOR, DOCS, FIXED_TIME, _with_fixed_zip_times

SLIDES = [
    ("Incident response briefing", "What every responder does in the first hour of a major incident."),
    ("Declare early", "Open an incident channel, name an incident commander and a scribe, and set the severity."),
    ("Stabilise first", "Roll back the last change before you debug it; restore service, then find the cause."),
    ("Communicate", "Post a status page update every thirty minutes, even when nothing has changed."),
]

ROTA = [
    ("Week", "Primary", "Secondary", "Escalation manager"),
    ("2025-W02", "Amara Okafor", "Jonas Berg", "Priya Natarajan"),
    ("2025-W03", "Jonas Berg", "Lucia Ferreira", "Priya Natarajan"),
    ("2025-W04", "Lucia Ferreira", "Tomasz Wilk", "Daniel Osei"),
    ("2025-W05", "Tomasz Wilk", "Amara Okafor", "Daniel Osei"),
]

NOTICE = [
    "FIRE DRILL NOTICE",
    "The data centre fire drill takes place on the first",
    "Tuesday of every month at 10:00. When the alarm",
    "sounds, leave by the north stairwell and gather at",
    "the car park assembly point. Do not use the lifts.",
]


def write_pptx(path: Path) -> None:
    from pptx import Presentation

    deck = Presentation()
    props = deck.core_properties
    props.title, props.author, props.last_modified_by = SLIDES[0][0], AUTHOR, AUTHOR
    props.created = props.modified = FIXED_TIME
    props.revision = 1
    for title, body in SLIDES:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
    buffer = io.BytesIO()
    deck.save(buffer)
    path.write_bytes(_with_fixed_zip_times(buffer.getvalue()))


def write_xlsx(path: Path) -> None:
    import openpyxl

    book = openpyxl.Workbook()
    book.properties.creator = AUTHOR
    book.properties.title = "On-call rota"
    book.properties.created = book.properties.modified = FIXED_TIME
    sheet = book.active
    sheet.title = "On-call rota"
    for row in ROTA:
        sheet.append(row)
    buffer = io.BytesIO()
    book.save(buffer)
    path.write_bytes(_with_fixed_zip_times(_fixed_xlsx_modified(buffer.getvalue())))


def _fixed_xlsx_modified(data: bytes) -> bytes:
    """openpyxl stamps dcterms:modified with the time of saving, whatever the properties say."""
    stamp = FIXED_TIME.strftime("%Y-%m-%dT%H:%M:%SZ").encode()
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            body = src.read(info.filename)
            if info.filename == "docProps/core.xml":
                body = re.sub(rb"(<dcterms:modified[^>]*>)[^<]*", rb"\g<1>" + stamp, body)
            dst.writestr(info, body)
    return out.getvalue()


def write_scanned_pdf(path: Path) -> None:
    """A printed notice as a scanner yields it: one image per page, no text layer."""
    from PIL import Image, ImageDraw, ImageFilter, ImageFont

    page = Image.new("L", (1240, 1754), 250)  # A4 at 150 dpi, off-white paper
    draw = ImageDraw.Draw(page)
    for i, line in enumerate(NOTICE):
        font = ImageFont.load_default(size=52 if i == 0 else 36)
        draw.text((110, 160 + i * 70 + (20 if i else 0)), line, fill=20, font=font)
    page = page.filter(ImageFilter.GaussianBlur(0.6))  # a scan is never quite sharp
    stamp = dt.datetime(2025, 1, 6, 9, 0, 0)
    page.save(path, format="PDF", resolution=150.0, title="Fire drill notice", author=AUTHOR,
              creationDate=stamp.timetuple(), modDate=stamp.timetuple())


def main() -> None:
    targets = {
        "handbook/incident-response-briefing.pptx": write_pptx,
        "handbook/on-call-rota.xlsx": write_xlsx,
        "handbook/fire-drill-notice-scanned.pdf": write_scanned_pdf,
    }
    for relative, write in targets.items():
        path = DOCS / relative
        write(path)
        print(f"wrote {path.relative_to(DOCS.parent.parent)} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
