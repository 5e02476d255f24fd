"""OCR of scanned pages and images (docs/ingester.md, "Scanned pages (OCR)").

The models are the PP-OCRv4 detection and recognition ONNX files inside the
``rapidocr-onnxruntime`` wheel (its direction classifier is loaded, as the
engine requires, but not run: pages are taken upright), passed by path:
nothing is downloaded, ever. They read Chinese and English
(``processing.ocr_lang: ch_en``). Lines are found on the page scaled to
``DET_SIDE`` pixels and read at 144 dpi, one line at a time (a batch of lines
is padded to its widest, and costs twice the memory for no speed); the models
are dropped after each file (``release``). In the ingester, each page is read
holding the OCR slot (``ocr_slot``), so one page at a time is read across its
conversion workers, and the memory the read took is handed back to the OS
before the slot is let go, so a worker between its pages is not at OCR's peak.

``processing.ocr``: ``auto`` OCRs the PDF pages that have no text layer (and
every image), ``force`` every page, ``off`` none (an image then yields nothing).
An image whose declared size is over ``MAX_PIXELS`` is refused before it is
decoded (an image bomb).
"""

from __future__ import annotations

import io
from functools import lru_cache
from pathlib import Path
from typing import Any

from haiku.core.convert.ocr_slot import ocr_slot
from haiku.core.errors import ConversionError
from haiku.core.memory import release_free_memory

OCR_MODES = ("auto", "off", "force")
OCR_LANGS = ("ch_en",)
MAX_PIXELS = 40_000_000  # 40 megapixels: an A4 page at 600 dpi is 35
PDF_RENDER_SCALE = 2.0  # 144 dpi
DET_SIDE = 1024  # the longest side, in pixels, of the image lines are detected on
MIN_SCORE = 0.5  # the recogniser's confidence below which a line is dropped
BLANK_CONTRAST = 24  # grey levels between a page's darkest and lightest pixel below which it is blank


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


def ocr_lines(image: Any) -> list[tuple[float, float, float, str]]:
    """(top, bottom, left, text) of each line OCR reads in an image (PIL).

    Lines are found on a copy scaled to ``DET_SIDE`` pixels at most (the
    detector, trained on such images, merges or misses the lines of a dense
    page at full resolution) and read from the full-resolution image.
    """
    import numpy as np
    from PIL import Image

    rgb = image.convert("RGB")
    factor = min(1.0, DET_SIDE / max(rgb.size))
    small = rgb.resize((max(1, round(rgb.width * factor)), max(1, round(rgb.height * factor))), Image.BILINEAR)
    engine = _engine()
    boxes, _elapsed = engine.text_det(np.asarray(small)[:, :, ::-1])
    if boxes is None or len(boxes) == 0:
        return []
    full = np.asarray(rgb)[:, :, ::-1]
    crops, places = [], []
    for box in boxes:
        xs, ys = box[:, 0] / factor, box[:, 1] / factor
        pad = 0.25 * (ys.max() - ys.min())  # a margin: the recogniser drops spaces in a tight crop
        x0, x1 = int(max(0, xs.min() - pad)), int(min(full.shape[1], xs.max() + pad))
        y0, y1 = int(max(0, ys.min() - pad / 2)), int(min(full.shape[0], ys.max() + pad / 2))
        if x1 - x0 >= 4 and y1 - y0 >= 4:
            crops.append(np.ascontiguousarray(full[y0:y1, x0:x1]))
            places.append((float(y0), float(y1), float(x0)))
    if not crops:
        return []
    read, _elapsed = engine.text_rec(crops)
    return [(*place, text.strip()) for place, (text, score) in zip(places, read, strict=True) if score >= MIN_SCORE]


def ocr_paragraphs(image: Any) -> list[str]:
    """The text of an image (PIL), as paragraphs in reading order."""
    low, high = image.convert("L").getextrema()
    if high - low < BLANK_CONTRAST:
        return []  # a blank page: nothing to read, and no model run for it
    with ocr_slot():
        try:
            read = ocr_lines(image)
        finally:
            release_free_memory()  # before the next page, this worker's or another's, takes the slot
    lines = sorted(read, key=lambda line: (round(line[0] / 8), line[2]))
    paragraphs: list[list[str]] = []
    previous_bottom = None
    for top, bottom, _left, text in lines:
        if not text:
            continue
        height = max(bottom - top, 1)
        if previous_bottom is None or top - previous_bottom > 0.8 * height:
            paragraphs.append([])
        paragraphs[-1].append(text)
        previous_bottom = bottom
    return [" ".join(p) for p in paragraphs]


def open_image(name: str, data: bytes) -> Any:
    """The image, its declared size checked before any pixel is decoded."""
    from PIL import Image

    bound = f"over the {MAX_PIXELS // 1_000_000} megapixel bound of OCR; refused without decoding it"
    try:
        image = Image.open(io.BytesIO(data))
        width, height = image.size
    except Image.DecompressionBombError as exc:
        raise ConversionError(f"{name}: {exc.args[0].split(',')[0]}, {bound}") from None
    except Exception as exc:  # PIL raises many types on bad bytes
        raise ConversionError(f"{name}: not a readable image: {type(exc).__name__}: {exc}") from None
    if width * height > MAX_PIXELS:
        raise ConversionError(f"{name}: the image declares {width}×{height} pixels, {bound}")
    try:
        image.load()
    except Exception as exc:
        raise ConversionError(f"{name}: the image could not be decoded: {type(exc).__name__}: {exc}") from None
    return image


def _add_page(document: Any, page_no: int, size: tuple[float, float], paragraphs: list[str]) -> None:
    from docling_core.types.doc import BoundingBox, DocItemLabel, ProvenanceItem, Size

    document.add_page(page_no=page_no, size=Size(width=size[0], height=size[1]))
    box = BoundingBox(l=0, t=0, r=size[0], b=size[1])
    for text in paragraphs:
        prov = ProvenanceItem(page_no=page_no, bbox=box, charspan=(0, len(text)))
        document.add_text(label=DocItemLabel.TEXT, text=text, prov=prov)


def image_document(name: str, data: bytes, *, mode: str = "auto") -> Any:
    """An image file as a one-page document of the text OCR reads in it."""
    from docling_core.types.doc import DoclingDocument

    image = open_image(name, data)
    document = DoclingDocument(name=Path(name).stem or "image")
    try:
        paragraphs = [] if mode == "off" else ocr_paragraphs(image)
    finally:
        release()
    _add_page(document, 1, (float(image.width), float(image.height)), paragraphs)
    return document


def pages_without_text(document: Any, page_count: int) -> list[int]:
    with_text = {prov.page_no for item in document.texts if item.text.strip() for prov in item.prov}
    return [page for page in range(1, page_count + 1) if page not in with_text]


def ocr_pdf(name: str, data: bytes, native: Any, *, mode: str) -> Any:
    """The PDF's document with OCR text on the pages the mode says (``auto``: pages
    without a text layer; ``force``: every page); ``native`` as is when none."""
    import pypdfium2

    if mode == "off":
        return native
    pdf = pypdfium2.PdfDocument(data)
    try:
        return _ocr_pages(name, pdf, native, mode=mode)
    finally:
        pdf.close()
        release()


def _ocr_pages(name: str, pdf: Any, native: Any, *, mode: str) -> Any:
    from docling_core.types.doc import DoclingDocument

    count = len(pdf)
    targets = set(range(1, count + 1)) if mode == "force" else set(pages_without_text(native, count))
    if not targets:
        return native
    document = DoclingDocument(name=native.name)
    for page_no in range(1, count + 1):
        page = pdf[page_no - 1]
        try:
            size = (float(page.get_width()), float(page.get_height()))
            if page_no not in targets:
                _copy_page(native, document, page_no, size)
                continue
            if size[0] * size[1] * PDF_RENDER_SCALE**2 > MAX_PIXELS:
                raise ConversionError(f"{name}: page {page_no} is too large to OCR")
            _add_page(document, page_no, size, ocr_paragraphs(page.render(scale=PDF_RENDER_SCALE).to_pil()))
        finally:
            page.close()
    return document


def _copy_page(source: Any, target: Any, page_no: int, size: tuple[float, float]) -> None:
    from docling_core.types.doc import DocItemLabel, Size

    target.add_page(page_no=page_no, size=Size(width=size[0], height=size[1]))
    for item in source.texts:
        provs = [p for p in item.prov if p.page_no == page_no]
        if provs and item.text.strip():
            target.add_text(label=DocItemLabel.TEXT, text=item.text, prov=provs[0])
