"""The PDF layout step: structure for the lines of docling's native pipeline (docs/ingester.md, "PDF layout").

The native pipeline reads a PDF's text layer as one ``text`` item per line (a
right-to-left line drawn run by run is joined in reading order: ``layout_bidi``); each
line gets its type size and weight from the text layer's characters
(``layout_fonts``). This step rebuilds the document page by page: the bundled layout model
(``layout_model``) finds the page's regions, the lines become blocks
(``layout_blocks``): section headers with levels (``layout_headings``, settled
over the whole document by ``layout_levels``), tables
with their cells (``layout_rulings`` for a table drawn with ruling lines, else
``layout_tables`` from the runs its lines split into, ``layout_runs``, in the
model's table regions and between the rules of a table set without column
rules), pictures with their captions, paragraphs,
and page headers and footers, which go to docling's furniture layer so that
neither the markdown nor the chunks carry them. Page images and the embedded
pictures of the native document are kept. Pages read by OCR stay as OCR read
them. Nothing is downloaded; ``processing.pdf_layout: off`` skips the step.
"""

from __future__ import annotations

from typing import Any

from haiku.core.convert.layout_bidi import logical_rows
from haiku.core.convert.layout_blocks import Block, PageLayout, recurring_edge_texts
from haiku.core.convert.layout_continuation import OpenParagraph, carry_on, continues
from haiku.core.convert.layout_fonts import with_fonts
from haiku.core.convert.layout_headings import SIGNALS, HeadingRule, pdf_outline
from haiku.core.convert.layout_levels import settled_levels
from haiku.core.convert.layout_lines import Line, is_ocr_page, page_lines
from haiku.core.convert.layout_model import Region, page_regions
from haiku.core.convert.layout_rulings import page_rules, rule_bands, ruled_tables
from haiku.core.convert.layout_runs import line_runs

PDF_LAYOUT_MODES = ("auto", "off")


def lay_out(
    data: bytes, native: Any, *, signals: frozenset[str] = SIGNALS, ocr_pages: frozenset[int] = frozenset()
) -> Any:
    """The native document of the PDF ``data``, rebuilt with its layout; ``signals``: the
    heading signals to use (``layout_headings``); ``ocr_pages``: the pages OCR read, kept as read."""
    import pypdfium2

    lines = {no: x if no in ocr_pages else logical_rows(x) for no, x in page_lines(native).items()}
    if not lines:
        return native  # no text layer anywhere: nothing to lay out
    pdf = pypdfium2.PdfDocument(data)
    try:
        return _rebuilt(pdf, native, lines, signals, ocr_pages)
    finally:
        pdf.close()


def _rebuilt(
    pdf: Any, native: Any, lines: dict[int, list[Line]], signals: frozenset[str], ocr_pages: frozenset[int]
) -> Any:
    from docling_core.types.doc import DoclingDocument

    heights = {no: page.size.height for no, page in native.pages.items()}
    lines = _with_fonts(pdf, native, lines, ocr_pages)
    outline = pdf_outline(pdf) if "outline" in signals else []
    headings = HeadingRule([x for page in lines.values() for x in page], outline, signals)
    recurring = recurring_edge_texts(lines, heights)
    document = DoclingDocument(name=native.name, origin=native.origin)
    open_paragraph: OpenParagraph | None = None
    for page_no in sorted(native.pages):
        page = native.pages[page_no]
        document.add_page(page_no=page_no, size=page.size, image=page.image)
        on_page = lines.get(page_no, [])
        width, height = page.size.width, page.size.height
        if page_no in ocr_pages or is_ocr_page(on_page, width, height) or page_no > len(pdf):
            _copy_items(native, document, page_no)
            open_paragraph = None
            continue
        pdf_page = pdf[page_no - 1]
        try:
            regions = page_regions(pdf_page) if on_page else []
            rules = page_rules(pdf_page, height) if on_page else []
            ruled = ruled_tables(pdf_page, on_page, rules) if rules else []
            bands = rule_bands(rules, height)
            runs = line_runs(pdf_page, _in_tables(on_page, regions, bands), height)
        finally:
            pdf_page.close()
        pictures = _pictures(native, page_no, height)
        layout = PageLayout(width, height, regions, headings, recurring, pictures, ruled, runs, bands)
        open_paragraph = _emit(document, page_no, height, layout.blocks(on_page), open_paragraph)
    _settle_levels(document, by_numbering=not outline)
    return document


def _in_tables(lines: list[Line], regions: list[Region], bands: list[tuple[float, float, float, float]]) -> list[Line]:
    """The lines whose middle lies in a region the layout model calls a table, or between the
    rules of a table set without column rules (``layout_rulings.rule_bands``)."""
    tables = [(r.left, r.top, r.right, r.bottom) for r in regions if r.label == "table"] + bands
    return [x for x in lines if any(b[0] <= x.cx <= b[2] and b[1] <= x.cy <= b[3] for b in tables)]


def _with_fonts(pdf: Any, native: Any, lines: dict[int, list[Line]], ocr_pages: frozenset[int]) -> dict[int, list[Line]]:
    """The lines of each page with the text layer's type sizes and weights (``layout_fonts``)."""
    fitted = {}
    for page_no, on_page in lines.items():
        page = native.pages.get(page_no)
        read_by_ocr = page_no in ocr_pages or (page is not None and is_ocr_page(on_page, page.size.width, page.size.height))
        if page is None or read_by_ocr or page_no > len(pdf):
            fitted[page_no] = on_page
            continue
        pdf_page = pdf[page_no - 1]
        try:
            fitted[page_no] = with_fonts(pdf_page, on_page, page.size.height)
        finally:
            pdf_page.close()
    return fitted


def _settle_levels(document: Any, *, by_numbering: bool) -> None:
    """The document's heading levels settled over all its pages (``layout_levels``)."""
    from docling_core.types.doc import DocItemLabel

    headers = [item for item in document.texts if item.label == DocItemLabel.SECTION_HEADER]
    levels = settled_levels([(item.text, item.level) for item in headers], by_numbering=by_numbering)
    for item, level in zip(headers, levels, strict=True):
        item.level = level


def _pictures(native: Any, page_no: int, height: float) -> list[tuple[Any, tuple[float, float, float, float]]]:
    found = []
    for picture in native.pictures:
        if picture.prov and picture.prov[0].page_no == page_no:
            box = picture.prov[0].bbox.to_top_left_origin(page_height=height)
            found.append((picture, (box.l, box.t, box.r, box.b)))
    return found


def _copy_items(native: Any, document: Any, page_no: int) -> None:
    from docling_core.types.doc import DocItemLabel

    for item in native.texts:
        if item.prov and item.prov[0].page_no == page_no and item.text.strip():
            if item.label == DocItemLabel.SECTION_HEADER:  # a heading OCR told by its type
                copied = document.add_heading(text=item.text, level=getattr(item, "level", 1), prov=item.prov[0])
            else:
                copied = document.add_text(label=DocItemLabel.TEXT, text=item.text, prov=item.prov[0])
            copied.prov.extend(item.prov[1:])  # an OCR paragraph: a box per line
    for picture in native.pictures:
        if picture.prov and picture.prov[0].page_no == page_no:
            document.add_picture(image=picture.image, prov=picture.prov[0])


def _emit(
    document: Any, page_no: int, height: float, blocks: list[Block], open_paragraph: OpenParagraph | None
) -> OpenParagraph | None:
    """Add the page's blocks to ``document`` in order; captions then join their table or picture.
    A first paragraph that continues ``open_paragraph`` (``layout_continuation``) joins its item;
    the page's last paragraph is returned, open for the next page."""
    from docling_core.types.doc import (
        BoundingBox,
        ContentLayer,
        CoordOrigin,
        DocItemLabel,
        ProvenanceItem,
    )

    def prov(block: Block, text: str = "") -> Any:
        left, top, right, bottom = block.box
        box = BoundingBox(l=left, t=top, r=right, b=bottom, coord_origin=CoordOrigin.TOPLEFT)
        return ProvenanceItem(
            page_no=page_no, bbox=box.to_bottom_left_origin(page_height=height), charspan=(0, len(text))
        )

    furniture = {
        "page_header": DocItemLabel.PAGE_HEADER, "page_footer": DocItemLabel.PAGE_FOOTER, "contents": DocItemLabel.TEXT
    }
    placed: list[tuple[Block, Any]] = []
    for block in blocks:
        text = block.text
        if block.kind in furniture:
            document.add_text(
                label=furniture[block.kind], text=text, prov=prov(block, text), content_layer=ContentLayer.FURNITURE
            )
            continue
        if open_paragraph is not None and not placed and continues(open_paragraph.block, block):
            open_paragraph = carry_on(open_paragraph, block, prov(block, text))
            placed.append((block, open_paragraph.item))
            continue
        if block.kind == "heading":
            item = document.add_heading(text=text, level=block.level, prov=prov(block, text))
        elif block.kind == "table":
            item = document.add_table(data=block.table, prov=prov(block))
        elif block.kind == "picture":
            image = block.picture.image if block.picture is not None else None
            item = document.add_picture(image=image, prov=prov(block))
        elif block.kind == "caption":
            item = document.add_text(label=DocItemLabel.CAPTION, text=text, prov=prov(block, text))
        else:
            item = document.add_text(label=DocItemLabel.TEXT, text=text, prov=prov(block, text))
        placed.append((block, item))
    _attach_captions(placed)
    if not placed or placed[-1][0].kind != "text":
        return None
    last, item = placed[-1]
    if open_paragraph is not None and item is open_paragraph.item:
        return open_paragraph
    return OpenParagraph(last, item, item.text)


def _attach_captions(placed: list[tuple[Block, Any]]) -> None:
    """Each caption to the nearest picture or table of its kind on the page (else of any kind)."""
    targets = [(b, item) for b, item in placed if b.kind in ("picture", "table")]
    for block, caption in placed:
        if block.kind != "caption" or not targets:
            continue
        wanted = "table" if block.caption_of == "table" else "picture"
        pool = [t for t in targets if t[0].kind == wanted] or targets

        def distance(target: tuple[Block, Any], caption_box: tuple[float, ...] = block.box) -> float:
            box = target[0].box
            return max(box[1] - caption_box[3], caption_box[1] - box[3], 0.0)

        _, item = min(pool, key=distance)
        item.captions.append(caption.get_ref())
