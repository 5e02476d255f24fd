"""OCR of scanned pages and images (docs/ingester.md, "Scanned pages (OCR)").

The models are the PP-OCRv4 detection and recognition and the mobile
direction-classifier ONNX files inside the ``rapidocr-onnxruntime`` wheel,
passed by path: nothing is downloaded, ever. They read Chinese and English
(``processing.ocr_lang: ch_en``).

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

from haiku.core.errors import ConversionError

OCR_MODES = ("auto", "off", "force")
OCR_LANGS = ("ch_en",)
MAX_PIXELS = 40_000_000  # 40 megapixels: an A4 page at 600 dpi is 35
PDF_RENDER_SCALE = 2.0  # 144 dpi
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


@lru_cache(maxsize=1)
def _engine() -> Any:
    from rapidocr_onnxruntime import RapidOCR

    paths = bundled_models()
    return RapidOCR(
        det_model_path=str(paths["det"]),
        rec_model_path=str(paths["rec"]),
        cls_model_path=str(paths["cls"]),
        intra_op_num_threads=1,
        inter_op_num_threads=1,
    )


def ocr_paragraphs(image: Any) -> list[str]:
    """The text of an image (PIL), as paragraphs in reading order."""
    import numpy as np

    low, high = image.convert("L").getextrema()
    if high - low < BLANK_CONTRAST:
        return []  # a blank page: nothing to read, and no model run for it
    # Wider boxes than the default (unclip 1.6): the Chinese-English recogniser drops the
    # spaces between English words when a box hugs the glyphs.
    result, _elapsed = _engine()(
        np.asarray(image.convert("RGB"))[:, :, ::-1], box_thresh=0.5, unclip_ratio=2.0, text_score=0.5
    )
    lines = []
    for box, text, _score in result or []:
        ys = [point[1] for point in box]
        lines.append((min(ys), max(ys), min(point[0] for point in box), text.strip()))
    lines.sort(key=lambda line: (round(line[0] / 8), line[2]))
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
    paragraphs = [] if mode == "off" else ocr_paragraphs(image)
    _add_page(document, 1, (float(image.width), float(image.height)), paragraphs)
    return document


def pages_without_text(document: Any, page_count: int) -> list[int]:
    with_text = {prov.page_no for item in document.texts if item.text.strip() for prov in item.prov}
    return [page for page in range(1, page_count + 1) if page not in with_text]


def ocr_pdf(name: str, data: bytes, native: Any, *, mode: str) -> Any:
    """The PDF's document with OCR text on the pages the mode says (``auto``: pages
    without a text layer; ``force``: every page); ``native`` as is when none."""
    import pypdfium2
    from docling_core.types.doc import DoclingDocument

    if mode == "off":
        return native
    pdf = pypdfium2.PdfDocument(data)
    try:
        count = len(pdf)
        targets = set(range(1, count + 1)) if mode == "force" else set(pages_without_text(native, count))
        if not targets:
            return native
        document = DoclingDocument(name=native.name)
        for page_no in range(1, count + 1):
            page = pdf[page_no - 1]
            size = (float(page.get_width()), float(page.get_height()))
            if page_no in targets:
                image = page.render(scale=PDF_RENDER_SCALE).to_pil()
                if image.width * image.height > MAX_PIXELS:
                    raise ConversionError(f"{name}: page {page_no} is too large to OCR")
                _add_page(document, page_no, size, ocr_paragraphs(image))
            else:
                _copy_page(native, document, page_no, size)
            page.close()
    finally:
        pdf.close()
    return document


def _copy_page(source: Any, target: Any, page_no: int, size: tuple[float, float]) -> None:
    from docling_core.types.doc import DocItemLabel, Size

    target.add_page(page_no=page_no, size=Size(width=size[0], height=size[1]))
    for item in source.texts:
        provs = [p for p in item.prov if p.page_no == page_no]
        if provs and item.text.strip():
            target.add_text(label=DocItemLabel.TEXT, text=item.text, prov=provs[0])
