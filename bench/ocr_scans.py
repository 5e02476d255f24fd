"""How well and how fast OCR reads typeset pages scanned as a scanner gives them
(docs/ingester.md, "Scanned pages (OCR)").

Each page is an A4 page set with reportlab (a heading, three paragraphs of 10 pt
Helvetica, a 7 pt footnote), rendered at a scanner's resolution, turned a fraction
of a degree (seeded), saved as JPEG, and fed upright, sideways or upside down. Each
is converted as an image by ``Converter.convert``; reported per page: the words of
the body and of the footnote read (multiset recall), whether the heading,
paragraphs and footnote came out as set (as many, each with 90 % of its words),
and the CPU seconds the conversion took
(``time.process_time``: the machine is shared, wall time swings).

    python bench/ocr_scans.py [--dpi 150 200 300] [--turns 0 90 180 270] [--json out.json]
"""

from __future__ import annotations

import argparse
import io
import json
import random
import re
import time
from collections import Counter

HEADING = "Coastal Bird Survey"
PARAGRAPHS = [
    [
        "Sanderlings run along the edge of the waves, picking small crustaceans",
        "from the wet sand as each wave draws back. They were counted weekly",
        "along the northern shore between October and March.",
    ],
    [
        "Turnstones flip pebbles and strands of seaweed with their short bills",
        "to find the insects and sandhoppers hidden beneath them; flocks of",
        "twenty to forty birds were seen at low tide.",
    ],
    [
        "Curlews call across the saltmarsh at dusk, their long curved bills",
        "probing deep into the mud for worms and shellfish.",
    ],
]
FOOTNOTE = "Counts were made by two observers using telescopes; totals are the higher of their two counts."


def scanned_page(dpi: int, turn: int, seed: int):
    import pypdfium2
    from PIL import Image
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    page = canvas.Canvas(out, pagesize=A4)
    y = A4[1] - 72
    page.setFont("Helvetica-Bold", 18)
    page.drawString(72, y, HEADING)
    y -= 28
    page.setFont("Helvetica", 10)
    for paragraph in PARAGRAPHS:
        for line in paragraph:
            page.drawString(72, y, line)
            y -= 12
        y -= 10
    page.setFont("Helvetica", 7)
    page.drawString(72, 60, FOOTNOTE)
    page.save()
    image = pypdfium2.PdfDocument(out.getvalue())[0].render(scale=dpi / 72).to_pil().convert("L")
    image = image.rotate(random.Random(seed).uniform(-0.8, 0.8), resample=Image.BICUBIC, fillcolor=245)
    jpeg = io.BytesIO()
    image.save(jpeg, format="JPEG", quality=75)
    image = Image.open(io.BytesIO(jpeg.getvalue())).convert("L")
    turns = {90: Image.Transpose.ROTATE_90, 180: Image.Transpose.ROTATE_180, 270: Image.Transpose.ROTATE_270}
    return image.transpose(turns[turn]) if turn else image


def recall(truth: str, read: str) -> float:
    def words(text: str) -> Counter:
        return Counter(re.findall(r"[a-z]+", text.lower()))

    expected = words(truth)
    return sum((expected & words(read)).values()) / sum(expected.values())


def as_set(read: list[str], expected: list[str]) -> bool:
    """As many paragraphs as were set, each with 90 % of its words: the breaks where they were."""
    return len(read) == len(expected) and all(recall(want, got) >= 0.9 for want, got in zip(expected, read, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dpi", type=int, nargs="+", default=[150, 200, 300])
    parser.add_argument("--turns", type=int, nargs="+", default=[0, 90, 180, 270])
    parser.add_argument("--json", help="write the rows here too")
    args = parser.parse_args()

    from haiku.core.convert.converter import Converter
    from haiku.core.embedders import local_model_path

    converter = Converter(tokenizer_dir=local_model_path(), chunk_size=256)
    converter.convert(name="warm.png", fmt="image", data=_png(scanned_page(100, 0, 0)), pages=False)  # load models
    body = " ".join([HEADING, *(line for paragraph in PARAGRAPHS for line in paragraph)])
    expected = [HEADING, *(" ".join(paragraph) for paragraph in PARAGRAPHS), FOOTNOTE]
    rows = []
    print("| dpi | turn | body words | footnote words | paragraphs as set | CPU s |")
    print("|---|---|---|---|---|---|")
    for dpi in args.dpi:
        for turn in args.turns:
            data = _png(scanned_page(dpi, turn, seed=dpi + turn))
            started = time.process_time()
            document = converter.convert(name="scan.png", fmt="image", data=data, pages=False)
            cpu = time.process_time() - started
            paragraphs = [re.sub(r"\s+", " ", item.text).strip() for item in document.structure.items]
            body_read = " ".join(paragraphs[:-1]) if paragraphs else ""
            row = {
                "dpi": dpi, "turn": turn, "body": round(recall(body, body_read), 3),
                "footnote": round(recall(FOOTNOTE, paragraphs[-1] if paragraphs else ""), 3),
                "paragraphs": as_set(paragraphs, expected), "cpu_s": round(cpu, 2),
            }  # fmt: skip
            rows.append(row)
            print(f"| {dpi} | {turn} | {row['body']:.2f} | {row['footnote']:.2f} | {row['paragraphs']} | {cpu:.1f} |")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(rows, out, indent=1)


def _png(image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


if __name__ == "__main__":
    main()
