"""How many chunks an edit changes: the chunker's boundaries under local edits.

Builds markdown documents of SciFact abstracts (sentences in paragraphs of
three) in three shapes: a ``##`` section per abstract, one per 20 abstracts,
and none (everything under the title). For each, it edits paragraphs at random
positions (grow by a sentence, delete, insert a new one, cut to a third) and
counts the chunks of the edited document whose embedded text (headings and
text) the original lacks: the chunks an edit sends to the encoder. Also: a
sentence added to the first paragraph, and a section appended at the end.
Conversion and chunking run in process, as the ingester's conversion worker
runs them (docling's HybridChunker, chunk_size 256 tokens of the model).

    python bench/chunk_stability.py [--scifact PATH] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ABSTRACTS = 150
POSITIONS = 12
GROW = (
    " A newly added sentence about zebrafish fin regeneration and cardiomyocyte proliferation"
    " changes this paragraph considerably in length."
)
INSERTED = (
    "An inserted paragraph of moderate length that talks about protein folding kinetics in yeast cells"
    " under heat stress."
)
APPENDIX = "## Appendix\n\nA new closing section appended at the end of the document."


def paragraphs(text: str, sentences: int = 3) -> list[str]:
    parts = re.split(r"(?<=[.!?])\s+", text.strip())
    return [" ".join(parts[i : i + sentences]) for i in range(0, len(parts), sentences)]


def build(records: list[dict], heading_every: int | None) -> list[str]:
    """The document's blocks (joined by blank lines): title, headings, paragraphs."""
    blocks = ["# Collection"]
    for i, record in enumerate(records):
        if heading_every is not None and i % heading_every == 0:
            blocks.append(f"## {record['title']}")
        blocks.extend(paragraphs(record["text"]))
    return blocks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scifact", type=Path, default=REPO.parent / "shared" / "data" / "scifact")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    corpus = args.scifact / "corpus.jsonl"
    if not corpus.is_file():
        print(f"Error: no corpus.jsonl under {args.scifact}", file=sys.stderr)
        return 1

    from haiku.core.convert.converter import Converter
    from haiku.core.embedders import local_model_path

    records = []
    with corpus.open(encoding="utf-8") as handle:
        for line in handle:
            records.append(json.loads(line))
            if len(records) >= ABSTRACTS:
                break
    converter = Converter(tokenizer_dir=local_model_path(), chunk_size=256)

    def texts(blocks: list[str]) -> list[str]:
        data = ("\n\n".join(blocks) + "\n").encode()
        return [c.embed_text for c in converter.convert(name="doc.md", fmt="md", data=data).chunks]

    rng = random.Random(1)
    shapes = {"a section per abstract": 1, "a section per 20 abstracts": 20, "no sections": None}
    figures: dict[str, dict] = {}
    for shape, every in shapes.items():
        blocks = build(records, every)
        original = set(texts(blocks))
        body = [i for i, block in enumerate(blocks) if not block.startswith("#")]

        def changed(edited: list[str]) -> int:
            return sum(1 for text in texts(edited) if text not in original)  # noqa: B023

        row: dict[str, object] = {"chunks": len(original)}
        for kind in ("grow", "delete", "insert", "shrink"):
            counts = []
            for at in rng.sample(body, POSITIONS):
                edited = list(blocks)
                if kind == "grow":
                    edited[at] += GROW
                elif kind == "delete":
                    del edited[at]
                elif kind == "insert":
                    edited.insert(at, INSERTED)
                else:
                    edited[at] = edited[at][: len(edited[at]) // 3]
                counts.append(changed(edited))
            row[kind] = {"max": max(counts), "mean": round(sum(counts) / len(counts), 1)}
        first = list(blocks)
        first[body[0]] += GROW
        row["grow_first_paragraph"] = changed(first)
        row["append_section"] = changed([*blocks, APPENDIX])
        figures[shape] = row
        print(shape, json.dumps(row), flush=True)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
