"""How well context expansion by structure keeps a hit inside its section (docs/client.md,
"Context expansion"), over real documents ingested as an operator would.

    python bench/section_expansion.py                      # the sample documents of examples/docs
    python bench/section_expansion.py --docs DIR [--max-context-chars N]

The documents are ingested by ``haiku-ingester run-batch`` into a temporary
database. Then every chunk of every document stored with its items is taken
as a hit and expanded, and counted:

- ``heading``: the expanded text holds the hit's own section heading (the
  last of its ``headings``), for hits that have one;
- ``within limit``: the text is at most ``search.max_context_chars``, for hits
  whose own chunk fits;
- ``in section``: every chunk the expansion covers has the hit's headings.

It prints one line per folder and the totals, and ``--json`` the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


@dataclass
class Figures:
    hits: int = 0
    with_heading: int = 0
    heading_kept: int = 0
    fitting: int = 0
    within_limit: int = 0
    in_section: int = 0

    def line(self, name: str) -> str:
        def share(part: int, whole: int) -> str:
            return f"{part}/{whole} ({100 * part / whole:.0f} %)" if whole else "-"

        return (
            f"{name}: {self.hits} hits; heading {share(self.heading_kept, self.with_heading)}; "
            f"within limit {share(self.within_limit, self.fitting)}; in section {share(self.in_section, self.hits)}"
        )


def ingest(root: Path, docs: Path, max_context_chars: int) -> Path:
    config = root / "haiku.rag.yaml"
    config.write_text(
        f"storage:\n  data_dir: {root / 'data'}\n  auto_vacuum: false\n"
        f"search:\n  max_context_chars: {max_context_chars}\n"
        f"lancedb:\n  databases:\n    bench: {root / 'bench.lancedb'}\n"
        "ingester:\n  databases:\n    bench:\n      sources:\n"
        f"        - {{type: fs, root: {docs}, id: bench}}\n",
        encoding="utf-8",
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    subprocess.run([str(BIN / "haiku-ingester"), "--config", str(config), "run-batch"], check=True, env=env,
                   capture_output=True)
    return config


async def measure(config: Path) -> dict[str, Figures]:
    from haiku.core.config import load_config
    from haiku.core.models import SearchResult
    from haiku.rag.client import HaikuRAG

    app = load_config(config)
    limit = app.search.max_context_chars
    figures: dict[str, Figures] = {}
    async with HaikuRAG(config=app, read_only=True) as client:
        for document in await client.list_documents():
            if not await client.get_document_items(document.id):
                continue
            chunks = await client.get_chunks(document.id)
            by_id = {chunk.id: chunk for chunk in chunks}
            kind = Path(document.uri or "").suffix.lstrip(".") or "?"
            counted = figures.setdefault(kind, Figures())
            for chunk in chunks:
                hit = SearchResult(content=chunk.content, score=1.0, chunk_id=chunk.id, document_id=document.id,
                                   source=chunk.source, headings=chunk.headings)
                [expanded] = await client.expand_context([hit])
                counted.hits += 1
                if chunk.headings:
                    counted.with_heading += 1
                    counted.heading_kept += chunk.headings[-1] in expanded.content
                if len(chunk.content) <= limit:
                    counted.fitting += 1
                    counted.within_limit += len(expanded.content) <= limit
                counted.in_section += all(by_id[i].headings == chunk.headings for i in expanded.chunk_ids)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=Path, default=REPO / "examples" / "docs", help="a folder of documents")
    parser.add_argument("--max-context-chars", type=int, default=5000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shutil.copytree(args.docs, root / "docs")
        figures = asyncio.run(measure(ingest(root, root / "docs", args.max_context_chars)))
    total = Figures(*(sum(getattr(f, name) for f in figures.values()) for name in Figures.__dataclass_fields__))
    if args.json:
        print(json.dumps({"by_format": {k: asdict(v) for k, v in figures.items()}, "total": asdict(total)}, indent=2))
    else:
        for kind, counted in sorted(figures.items()):
            print(counted.line(kind))
        print(total.line("total"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
