"""``processing``: how a file becomes a document and its chunks (docs/ingester.md, docs/pictures.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from haiku.core.config._base import Section


class PictureModelConfig(Section):
    """The OpenAI-compatible vision model that describes pictures at ingest (docs/pictures.md)."""

    base_url: str
    name: str
    api_key_env: str | None = None  # the environment variable holding the key, sent as a Bearer token
    timeout_s: float = Field(default=60.0, gt=0)
    concurrency: int = Field(default=4, ge=1)


class ProcessingConfig(Section):
    chunk_size: int = Field(default=256, gt=0)
    conversion_timeout_s: float = Field(default=300.0, gt=0)
    # OCR of scanned pages and images (docs/ingester.md, "Scanned pages (OCR)"): auto = the
    # PDF pages without a text layer, and images; force = every page; off = none.
    ocr: Literal["auto", "off", "force"] = "auto"
    # The bundled models read Chinese and English; no other language is bundled.
    ocr_lang: Literal["ch_en"] = "ch_en"
    # The PDF layout step (docs/ingester.md, "PDF layout"): auto = headings, tables, pictures and
    # page headers/footers from the bundled layout model; off = the text layer's lines only.
    pdf_layout: Literal["auto", "off"] = "auto"
    # What a document keeps beside its text (docs/ingester.md, "Structure, pictures and page images"):
    # page images of paginated documents (one row per page) at this many pixels per page point,
    # pictures as PNG (`none`: not stored; `description`: stored and described by picture_model,
    # docs/pictures.md), skipping those whose short side is below min_picture_px and storing at
    # most max_pictures per document.
    page_images: bool = True
    page_image_scale: float = Field(default=1.0, gt=0, le=4)
    pictures: Literal["none", "image", "description"] = "image"
    min_picture_px: int = Field(default=64, ge=0)
    max_pictures: int = Field(default=500, ge=0)
    # The vision model `pictures: description` sends each stored picture to (docs/pictures.md).
    picture_model: PictureModelConfig | None = None

    @model_validator(mode="after")
    def _description_needs_a_model(self) -> ProcessingConfig:
        if self.pictures == "description" and self.picture_model is None:
            raise ValueError(
                "pictures is description but picture_model is not set; name the vision model "
                "(picture_model.base_url, picture_model.name) or choose pictures: image"
            )
        return self
