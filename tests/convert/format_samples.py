"""Small files of every format, made in the test (docs/ingester.md, "Formats").

Each maker returns the file's bytes; ``SAMPLES`` names each file and a sentence
its converted chunks must hold. python-pptx, openpyxl, odfdo, python-docx and
PIL make the binary ones, as a user's tools would; aspose-email-foss (a pure
Python writer of the OLE compound file) makes the Outlook ``.msg``.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable


def pptx(sentence: str) -> bytes:
    from pptx import Presentation

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Field notes"
    slide.placeholders[1].text = sentence
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def xlsx(sentence: str) -> bytes:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["observation", "count"])
    sheet.append([sentence, 3])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def docx_with_equation(sentence: str) -> bytes:
    """A Word file holding an Office Math equation next to a paragraph."""
    import docx
    from docx.oxml import parse_xml

    document = docx.Document()
    document.add_paragraph(sentence)
    math = (
        '<m:oMathPara xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math">'
        "<m:oMath><m:r><m:t>E=m</m:t></m:r><m:sSup><m:e><m:r><m:t>c</m:t></m:r></m:e>"
        "<m:sup><m:r><m:t>2</m:t></m:r></m:sup></m:sSup></m:oMath></m:oMathPara>"
    )
    document.add_paragraph()._p.append(parse_xml(math))
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def odt(sentence: str) -> bytes:
    from odfdo import Document, Header, Paragraph

    document = Document("text")
    document.body.append(Header(1, "Field notes"))
    document.body.append(Paragraph(sentence))
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def ods(sentence: str) -> bytes:
    from odfdo import Document, Table

    document = Document("spreadsheet")
    table = Table("Notes")
    table.set_values([["observation", "count"], [sentence, "3"]])
    document.body.append(table)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def odp(sentence: str) -> bytes:
    from odfdo import Document, DrawPage, Frame

    document = Document("presentation")
    page = DrawPage("p1", name="Field notes")
    page.append(Frame.text_frame(sentence, size=("20cm", "3cm"), position=("1cm", "1cm")))
    document.body.append(page)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def epub(sentence: str) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as book:
        book.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        book.writestr(
            "META-INF/container.xml",
            '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
            '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
            "</rootfiles></container>",
        )
        book.writestr(
            "OEBPS/content.opf",
            '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">'
            '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Field notes</dc:title>'
            '<dc:identifier id="id">notes</dc:identifier><dc:language>en</dc:language></metadata>'
            '<manifest><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/></manifest>'
            '<spine><itemref idref="c1"/></spine></package>',
        )
        book.writestr(
            "OEBPS/c1.xhtml",
            '<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>Field notes</title></head>'
            f"<body><h1>Field notes</h1><p>{sentence}</p></body></html>",
        )
    return out.getvalue()


def text_image(sentence: str, *, fmt: str = "PNG") -> bytes:
    """``sentence`` drawn in black on white, saved as ``fmt`` (``PDF``: a scanned page, no text layer)."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGB", (1400, 300), "white")
    ImageDraw.Draw(image).text((40, 110), sentence, fill="black", font=ImageFont.load_default(size=44))
    out = io.BytesIO()
    image.save(out, format=fmt)
    return out.getvalue()


def pdf_with_text_layer(text: str) -> bytes:
    """A one-page PDF whose line of text is in its text layer (no OCR needed)."""
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    pdf = canvas.Canvas(out)
    pdf.setFont("Helvetica", 28)
    pdf.drawString(72, 720, text)
    pdf.showPage()
    pdf.save()
    return out.getvalue()


def jats(sentence: str) -> bytes:
    return (
        '<?xml version="1.0"?>\n<!DOCTYPE article PUBLIC "-//NLM//DTD JATS (Z39.96) Journal Publishing DTD v1.2'
        ' 20190208//EN" "JATS-journalpublishing1.dtd">\n<article><front><article-meta><title-group>'
        "<article-title>Field notes</article-title></title-group></article-meta></front><body><sec>"
        f"<title>Results</title><p>{sentence}</p></sec></body></article>"
    ).encode()


def _text(template: str) -> Callable[[str], bytes]:
    return lambda sentence: template.format(sentence=sentence).encode()


def outlook_msg(sentence: str) -> bytes:
    """An Outlook message (an OLE compound file of MAPI properties), as Outlook saves one."""
    import tempfile
    from email.message import EmailMessage
    from pathlib import Path

    from aspose.email_foss.msg.mapi_message import MapiMessage

    mail = EmailMessage()
    mail["Subject"], mail["From"], mail["To"] = "Field notes", "Ann <ann@example.org>", "bo@example.org"
    mail.set_content(f"{sentence}.\n")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "notes.msg"
        MapiMessage.from_email_message(mail).save(path)
        return path.read_bytes()


# file name -> (maker, a sentence the chunks must hold)
SAMPLES: dict[str, tuple[Callable[[str], bytes], str]] = {
    "deck.pptx": (pptx, "Kestrels hover above the meadow"),
    "sheet.xlsx": (xlsx, "Avocets sweep the mudflats"),
    "macro.xlsm": (xlsx, "Bitterns boom in the reeds"),
    "equation.docx": (docx_with_equation, "Curlews probe the estuary"),
    "text.odt": (odt, "Dippers walk under the stream"),
    "sheet.ods": (ods, "Eiders raft off the point"),
    "slides.odp": (odp, "Fulmars glide along the cliff"),
    "book.epub": (epub, "Gannets plunge from great heights"),
    "paper.xml": (jats, "Cormorants dive to forty metres"),
    "table.csv": (_text("observation,count\n{sentence},4\n"), "Godwits feed at low tide"),
    "guide.adoc": (_text("= Field notes\n\n{sentence}.\n"), "Harriers quarter the marsh"),
    "paper.tex": (
        _text("\\documentclass{{article}}\\begin{{document}}\\section{{Notes}}{sentence}.\\end{{document}}"),
        "Ibises roost in the trees",
    ),
    "talk.vtt": (_text("WEBVTT\n\n00:00.000 --> 00:03.000\n{sentence}.\n"), "Jays bury acorns in autumn"),
    "mail.eml": (
        _text("From: a@example.org\nTo: b@example.org\nSubject: Field notes\nContent-Type: text/plain\n\n{sentence}.\n"),
        "Knots gather in huge flocks",
    ),
    "mail.msg": (outlook_msg, "Ruffs display on the lek"),
    "notes.rst": (_text("Field notes\n===========\n\n{sentence}.\n"), "Lapwings tumble in spring"),
    "birds.py": (_text('def note():\n\treturn "{sentence}"\n'), "Merlins chase pipits"),
    "birds.go": (_text('package birds\n\n// {sentence}\nfunc Note() {{}}\n'), "Nightjars churr at dusk"),
    "birds.json": (_text('{{"note": "{sentence}"}}\n'), "Ospreys fish the loch"),
    "birds.yaml": (_text("note: {sentence}\n"), "Plovers run and stop"),
    "plain.xml": (_text("<?xml version='1.0'?><notes><note>{sentence}</note></notes>\n"), "Quails call from the barley"),
    "scan.png": (text_image, "Redshanks alarm the marsh"),
}
