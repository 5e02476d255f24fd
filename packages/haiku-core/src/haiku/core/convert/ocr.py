"""OCR of scanned pages and images (docs/ingester.md, "Scanned pages (OCR)").

The models are the PP-OCRv4 detection and recognition ONNX files inside the
``rapidocr-onnxruntime`` wheel (its direction classifier is loaded, as the
engine requires, but not run: a page's orientation is found by reading it
turned, ``ocr_orientation``), passed by path: nothing is downloaded, ever.
They read Chinese and English (``processing.ocr_lang: ch_en``). Lines are
found on the page scaled to ``DET_SIDE`` pixels and read at 216 dpi, one line
at a time (a batch of lines is padded to its widest, and costs twice the
memory for no speed), and kept as paragraphs of lines (``ocr_text``); every
page of a multi-page TIFF is read; a page yielding under ``UNREADABLE_CHARS``
characters is logged and listed in the document metadata; the models
are dropped after each file (``release``). In the ingester, each page is read
holding the OCR slot (``ocr_slot``), so one page at a time is read across its
conversion workers, and the memory the read took is handed back to the OS
before the slot is let go, so a worker between its pages is not at OCR's peak.

``processing.ocr``: ``auto`` OCRs the PDF pages that have no readable text layer
(none, or one of symbols that spell no word) and every image, ``force`` every
page, ``off`` none (an image then yields nothing).
An image whose declared size is over ``MAX_PIXELS`` is refused before it is
decoded (an image bomb).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from haiku.core.convert.ocr_crops import line_crop
from haiku.core.convert.ocr_headings import Body, body_of, with_strokes
from haiku.core.convert.ocr_orientation import turned, turned_back, upright_read
from haiku.core.convert.ocr_slot import ocr_slot
from haiku.core.convert.ocr_text import OcrLine, Paragraph, add_paragraphs, paragraphs
from haiku.core.convert.scan_images import MAX_PIXELS, image_pages
from haiku.core.errors import ConversionError
from haiku.core.logs import get_logger
from haiku.core.memory import release_free_memory

log = get_logger("haiku.core.convert")

OCR_MODES = ("auto", "off", "force")
OCR_LANGS = ("ch_en",)
# 216 dpi, and lines found on the page scaled to 1280 pixels (in two bands: ``_detect``): a
# scan's 7 pt small print is read (a word recall of 0.41-0.86 at 150-300 dpi, against
# 0.24-0.31 at 144 dpi and 1024 pixels) for about 1.3 times the CPU time a page
# (docs/ingester.md, "Scanned pages (OCR)").
PDF_RENDER_SCALE = 3.0
DET_SIDE = 1280  # the longest side, in pixels, of the image lines are detected on
BLANK_CONTRAST = 24  # grey levels between a page's darkest and lightest pixel below which it is blank
DET_BANDS = 2  # bands a page is detected in ...
DET_BAND_OVER = 800_000  # ... when the scaled page has more pixels than this
DET_OVERLAP = 128  # pixels two bands share: more than a heading's height at DET_SIDE
QUARTER_SAMPLE = 8  # lines the direction classifier is asked of to tell 90 from 270 degrees
GARBLED_SHARE = 0.25  # a text layer this much of dingbats and private-use codes is read by OCR (``pages_without_text``)
UNREADABLE_CHARS = 20  # a page OCR reads fewer characters on is reported unreadable
UNREADABLE_PAGES = "unreadable_pages"  # the document metadata key listing them


@lru_cache(maxsize=1)
def bundled_models() -> dict[str, Path]:
    """The model files shipped inside the rapidocr-onnxruntime wheel."""
    import importlib.util

    spec = importlib.util.find_spec("rapidocr_onnxruntime")
    if spec is None or spec.origin is None:
        raise ConversionError("OCR needs the rapidocr-onnxruntime package (pip install 'haiku-core[convert]')")
    models = Path(spec.origin).parent / "models"
    paths = {
        "det": models / "ch_PP-OCRv4_det_infer.onnx",
        "rec": models / "ch_PP-OCRv4_rec_infer.onnx",
        "cls": models / "ch_ppocr_mobile_v2.0_cls_infer.onnx",
    }
    missing = [str(p) for p in paths.values() if not p.is_file()]
    if missing:
        raise ConversionError(f"the OCR models of rapidocr-onnxruntime are missing: {', '.join(missing)}")
    return paths


_loads = 0  # times this process has loaded the models (``times_loaded``)


def times_loaded() -> int:
    """How many times this process has loaded the OCR models: once per file that ran OCR.
    A conversion worker compares it around a file to know whether the file ran OCR."""
    return _loads


@lru_cache(maxsize=1)
def _engine() -> Any:
    from rapidocr_onnxruntime import RapidOCR

    global _loads
    _loads += 1
    paths = bundled_models()
    return RapidOCR(
        det_model_path=str(paths["det"]),
        rec_model_path=str(paths["rec"]),
        cls_model_path=str(paths["cls"]),
        intra_op_num_threads=1,
        inter_op_num_threads=1,
        rec_batch_num=1,
    )


def release() -> None:
    """Drop the OCR models and give their memory back to the OS: a worker holds them only
    while it reads a file, so workers that are not OCRing stay small."""
    import gc

    _engine.cache_clear()
    gc.collect()
    release_free_memory()


def read_lines(image: Any) -> list[OcrLine]:
    """Each box OCR finds in an image (PIL) and the text read in it (however poorly: ``readable``
    keeps the lines read well), in the image's pixels.

    Lines are found on a copy scaled to ``DET_SIDE`` pixels at most (the
    detector, trained on such images, merges or misses the lines of a dense
    page at full resolution) and read from the full-resolution image, each cut
    out along its own box and set straight (``ocr_crops``).
    """
    import numpy as np
    from PIL import Image

    rgb = image.convert("RGB")
    factor = min(1.0, DET_SIDE / max(rgb.size))
    small = rgb.resize((max(1, round(rgb.width * factor)), max(1, round(rgb.height * factor))), Image.BILINEAR)
    engine = _engine()
    boxes = _detect(engine, np.asarray(small)[:, :, ::-1])
    if not boxes:
        return []
    full = np.asarray(rgb)  # cut from as RGB, each line then turned to the engine's BGR: no copy of the page
    crops, places = [], []
    for box in boxes:
        corners = box / factor
        crop = line_crop(full, corners)
        if crop is not None:
            xs, ys = corners[:, 0], corners[:, 1]
            crops.append(np.ascontiguousarray(crop[:, :, ::-1]))
            places.append((float(xs.min()), float(ys.min()), float(xs.max()), float(ys.max())))
    if not crops:
        return []
    read, _elapsed = engine.text_rec(crops)
    return [OcrLine(*place, text.strip(), float(score)) for place, (text, score) in zip(places, read, strict=True)]


def _detect(engine: Any, image: Any) -> list[Any]:
    """The detector's boxes (4 corners each) on ``image`` (BGR array), found in ``DET_BANDS``
    overlapping bands of rows when it is over ``DET_BAND_OVER`` pixels: the detector's
    working memory grows with the pixels it sees at once, and a page at ``DET_SIDE`` in one
    piece took the ingester past its memory bound (docs/ingester.md, "Memory"). The bands
    run across the page, as its lines do (bands of columns would cut every line of a
    landscape page in two, each piece read, the overlap twice). A box is kept by the band
    its centre lies in (the bands split in the middle of their overlap), so a line on the
    seam is found whole, once."""
    import numpy as np

    height, width = image.shape[:2]
    if height * width <= DET_BAND_OVER:
        found, _elapsed = engine.text_det(image)
        return [] if found is None else list(found)
    window = min(height, -(-height // DET_BANDS) + DET_OVERLAP)
    starts = [round(i * (height - window) / (DET_BANDS - 1)) for i in range(DET_BANDS)]
    seams = [0] + [(starts[i] + window + starts[i + 1]) // 2 for i in range(DET_BANDS - 1)] + [height]
    boxes = []
    for band, start in enumerate(starts):
        found, _elapsed = engine.text_det(np.ascontiguousarray(image[start : start + window]))
        for box in [] if found is None else found:
            box = box.copy()
            box[:, 1] += start  # corners are (x, y)
            centre = (box[:, 1].min() + box[:, 1].max()) / 2
            if seams[band] <= centre < seams[band + 1]:
                boxes.append(box)
    return boxes


def quarter_turn(image: Any, lines: list[OcrLine]) -> int:
    """The quarter turn (90 or 270 degrees counter-clockwise) that sets upright the text of a page
    whose lines run up or down it: the direction classifier, which tells a line upright from
    upside down, is asked of the longest lines turned a quarter counter-clockwise."""
    import numpy as np
    from PIL import Image

    longest = sorted(lines, key=lambda line: line.top - line.bottom)[:QUARTER_SAMPLE]
    crops = [
        np.ascontiguousarray(
            np.asarray(image.crop((line.left, line.top, line.right, line.bottom)).convert("RGB")
                       .transpose(Image.Transpose.ROTATE_90))[:, :, ::-1]
        )
        for line in longest
    ]  # fmt: skip
    if not crops:
        return 90
    _images, labels, _elapsed = _engine().text_cls(crops)
    upside_down = sum(1 for label, _score in labels if "180" in label)
    return 270 if 2 * upside_down > len(labels) else 90


@dataclass(frozen=True)
class PageRead:
    """What OCR read on a page: its paragraphs (boxes on the page as it is, in its pixels),
    the turn it was read at, and whether it is blank."""

    paragraphs: list[Paragraph]
    turn: int = 0
    blank: bool = False

    @property
    def chars(self) -> int:
        return sum(len(line.text) for paragraph in self.paragraphs for line in paragraph.lines)


@dataclass(frozen=True)
class _Seen:
    """A page's lines as OCR read them (upright, their strokes measured), before they are laid
    out as paragraphs: a document's pages are all seen first, so that a page too short to
    measure its body type (a cover) is measured against the document's."""

    lines: list[OcrLine]
    turn: int
    width: int
    height: int
    blank: bool = False


def _see(image: Any) -> _Seen:
    low, high = image.convert("L").getextrema()
    if high - low < BLANK_CONTRAST:
        return _Seen([], 0, image.width, image.height, blank=True)  # nothing to read, no model run
    with ocr_slot():
        try:
            turn, lines = upright_read(image, read_lines, quarter_turn)
        finally:
            release_free_memory()  # before the next page, this worker's or another's, takes the slot
    lines = with_strokes(lines, turned(image, turn) if turn else image)
    return _Seen(lines, turn, image.width, image.height)


def _laid_out(seen: _Seen, fallback: Body | None = None) -> PageRead:
    if seen.blank:
        return PageRead([], blank=True)
    found = [
        Paragraph([turned_back(line, seen.turn, seen.width, seen.height) for line in paragraph.lines], paragraph.level)
        for paragraph in paragraphs(seen.lines, fallback)
    ]
    return PageRead(found, seen.turn)


def _document_body(pages: list[_Seen]) -> Body | None:
    return body_of([line for seen in pages for line in seen.lines])


def read_page(image: Any) -> PageRead:
    """The text of a page image (PIL) as paragraphs in reading order, read the right way up."""
    return _laid_out(_see(image))


def ocr_paragraphs(image: Any) -> list[str]:
    """The text of an image (PIL), as paragraphs in reading order, each line on its own line."""
    return [paragraph.text for paragraph in read_page(image).paragraphs]


@dataclass
class Scan:
    """A document with pages read by OCR: which pages OCR read, and which of them
    yielded under ``UNREADABLE_CHARS`` characters (a blank page aside)."""

    document: Any
    ocr_pages: frozenset[int] = frozenset()
    unreadable_pages: list[int] = field(default_factory=list)

    @property
    def metadata(self) -> dict[str, Any]:
        """What the document metadata should say of the scan: its unreadable pages, if any."""
        return {UNREADABLE_PAGES: list(self.unreadable_pages)} if self.unreadable_pages else {}


def _add_read_page(scan: Scan, name: str, page_no: int, size: tuple[float, float], seen: _Seen, body: Body | None) -> None:
    """OCR's read of a page image as page ``page_no`` of the scan (``size``: the page's size in
    its units; ``body``: the document's body type)."""
    from docling_core.types.doc import Size

    read = _laid_out(seen, body)
    scan.document.add_page(page_no=page_no, size=Size(width=size[0], height=size[1]))
    add_paragraphs(scan.document, page_no, size[1], seen.width / size[0], read.paragraphs)
    scan.ocr_pages = scan.ocr_pages | {page_no}
    if not read.blank and read.chars < UNREADABLE_CHARS:
        scan.unreadable_pages.append(page_no)
        log.warning("page unreadable by OCR", file=name, page=page_no, chars=read.chars)


def image_document(name: str, data: bytes, *, mode: str = "auto") -> Scan:
    """An image file as a document of the text OCR reads in it, a page per frame of a TIFF."""
    from docling_core.types.doc import DoclingDocument, Size

    scan = Scan(DoclingDocument(name=Path(name).stem or "image"))
    try:
        seen: list[tuple[tuple[float, float], _Seen | None]] = []
        for image in image_pages(name, data):
            seen.append(((float(image.width), float(image.height)), None if mode == "off" else _see(image)))
    finally:
        release()
    body = _document_body([page for _, page in seen if page is not None])
    for page_no, (size, page) in enumerate(seen, start=1):
        if page is None:
            scan.document.add_page(page_no=page_no, size=Size(width=size[0], height=size[1]))
        else:
            _add_read_page(scan, name, page_no, size, page, body)
    return scan


def pages_without_text(document: Any, page_count: int) -> list[int]:
    """The pages with no readable text layer: none at all, or one whose characters are mostly
    symbols that spell no word (dingbats, private-use codes: a font embedded with no usable map
    to Unicode, as some TeX builds embed their bitmap fonts, reads "❆❞❥✉a115a116❡❞")."""
    visible: Counter[int] = Counter()
    garbled: Counter[int] = Counter()
    for item in document.texts:
        text = "".join(item.text.split())
        unreadable = sum(1 for ch in text if _garbled(ch))
        for prov in item.prov:
            visible[prov.page_no] += len(text)
            garbled[prov.page_no] += unreadable
    return [
        page for page in range(1, page_count + 1)
        if not visible[page] or garbled[page] >= GARBLED_SHARE * visible[page]
    ]


def _garbled(char: str) -> bool:
    code = ord(char)
    return 0x2460 <= code <= 0x27BF or 0xE000 <= code <= 0xF8FF or code == 0xFFFD


def ocr_pdf(name: str, data: bytes, native: Any, *, mode: str) -> Scan:
    """The PDF's document with OCR text on the pages the mode says (``auto``: pages
    without a text layer; ``force``: every page); ``native`` as is when none."""
    import pypdfium2

    if mode == "off":
        return Scan(native)
    pdf = pypdfium2.PdfDocument(data)
    try:
        return _ocr_pages(name, pdf, native, mode=mode)
    finally:
        pdf.close()
        release()


def _ocr_pages(name: str, pdf: Any, native: Any, *, mode: str) -> Scan:
    from docling_core.types.doc import DoclingDocument

    count = len(pdf)
    targets = set(range(1, count + 1)) if mode == "force" else set(pages_without_text(native, count))
    if not targets:
        return Scan(native)
    sizes: dict[int, tuple[float, float]] = {}
    seen: dict[int, _Seen] = {}
    for page_no in range(1, count + 1):
        page = pdf[page_no - 1]
        try:
            sizes[page_no] = size = (float(page.get_width()), float(page.get_height()))
            if page_no in targets:
                # a poster-sized page is read at the scale that keeps it within the bound
                scale = min(PDF_RENDER_SCALE, (MAX_PIXELS / max(size[0] * size[1], 1.0)) ** 0.5)
                seen[page_no] = _see(page.render(scale=scale).to_pil())
        finally:
            page.close()
    body = _document_body(list(seen.values()))
    scan = Scan(DoclingDocument(name=native.name))
    for page_no in range(1, count + 1):
        if page_no in seen:
            _add_read_page(scan, name, page_no, sizes[page_no], seen[page_no], body)
        else:
            _copy_page(native, scan.document, page_no, sizes[page_no])
    return scan


def _copy_page(source: Any, target: Any, page_no: int, size: tuple[float, float]) -> None:
    from docling_core.types.doc import DocItemLabel, Size

    target.add_page(page_no=page_no, size=Size(width=size[0], height=size[1]))
    for item in source.texts:
        provs = [p for p in item.prov if p.page_no == page_no]
        if provs and item.text.strip():
            target.add_text(label=DocItemLabel.TEXT, text=item.text, prov=provs[0])
