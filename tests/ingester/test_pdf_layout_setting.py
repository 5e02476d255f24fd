"""``processing.pdf_layout`` reaches the conversion workers (docs/ingester.md, "PDF layout")."""

from __future__ import annotations

import io

import pytest

from haiku.core.embedders import local_model_path

HEADING = "Volcano Survey Methods"


def _pdf_with_a_heading() -> bytes:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=A4)
    pdf.setFont("Helvetica-Bold", 20)
    pdf.drawString(72, 760, HEADING)
    pdf.setFont("Helvetica", 10)
    for i in range(30):
        pdf.drawString(72, 730 - 14 * i, f"Line {i + 1} of the field notes on the crater rim and its fumaroles.")
    pdf.showPage()
    pdf.save()
    return out.getvalue()


@pytest.mark.parametrize(("mode", "headings"), [("auto", [HEADING]), ("off", [])])
async def test_the_workers_convert_pdfs_with_the_configured_layout_mode(mode, headings):
    from haiku.ingester.pipeline.pool import ConversionPool

    pool = ConversionPool(size=1, tokenizer_dir=local_model_path(), chunk_size=128, timeout_s=120, pdf_layout=mode)
    await pool.start()
    try:
        document = await pool.convert(name="survey.pdf", fmt="pdf", data=_pdf_with_a_heading())
    finally:
        await pool.close()
    assert document.chunks[0].headings == headings
