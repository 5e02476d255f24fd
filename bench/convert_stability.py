"""Chunks of a corpus sample through the converter, written as JSON lines, to compare two commits.

Run it before and after a converter change and diff the two files: a change that
must not touch plain text (the SciFact corpus is ingested as text) leaves them
byte-identical.

    python bench/convert_stability.py --corpus /path/to/scifact/corpus.jsonl --limit 500 --out before.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, required=True, help="a BEIR corpus.jsonl")
    parser.add_argument("--limit", type=int, default=500)
    parser.add_argument("--chunk-size", type=int, default=256)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)

    from haiku.core.convert.converter import Converter
    from haiku.core.embedders import local_model_path

    converter = Converter(tokenizer_dir=local_model_path(), chunk_size=args.chunk_size)
    with args.corpus.open(encoding="utf-8") as corpus, args.out.open("w", encoding="utf-8") as out:
        for i, line in enumerate(corpus):
            if i >= args.limit:
                break
            row = json.loads(line)
            text = f"{row.get('title', '')} {row['text']}".strip()  # as bench/beir.py's full_text
            converted = converter.convert(name=f"{row['_id']}.txt", fmt="text", data=text.encode("utf-8"))
            record = {
                "id": row["_id"],
                "title": converted.title,
                "content": converted.content,
                "chunks": [[c.content, c.embed_text, c.headings, c.page_numbers] for c in converted.chunks],
            }
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    print(f"wrote {min(i + 1, args.limit)} documents to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
