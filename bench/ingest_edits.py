"""The edit scenario of bench/ingest.py: one paragraph edited in each of 20 long documents.

Builds 20 long markdown documents from SciFact abstracts (each abstract a
``##`` section under its title, its sentences in paragraphs of three), ingests
them with ``run-batch``, appends a sentence to one paragraph in the middle of
each, and syncs the edits with a second ``run-batch``. The baseline, in the
same run: a fresh ``run-batch`` of the same 20 edited documents into a new
database and queue, which is what every edit cost before vectors were reused
(every chunk converted, embedded and written).

    python bench/ingest.py --scenario edit [--scifact PATH] [--json OUT]
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

DOCUMENTS = 20
ABSTRACTS_PER_DOCUMENT = 110  # about 215 chunks of 256 tokens each
EDIT = " On review, the cohort was re-analysed with updated covariates and the estimate held."


def _paragraphs(text: str, sentences: int = 3) -> list[str]:
    parts = re.split(r"(?<=[.!?])\s+", text.strip())
    return [" ".join(parts[i : i + sentences]) for i in range(0, len(parts), sentences)]


def build_documents(corpus: Path, folder: Path) -> list[Path]:
    """DOCUMENTS markdown files of ABSTRACTS_PER_DOCUMENT sections each."""
    records = []
    with corpus.open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            if record.get("title") and len(_paragraphs(record.get("text", ""))) >= 2:
                records.append(record)
            if len(records) >= DOCUMENTS * ABSTRACTS_PER_DOCUMENT:
                break
    folder.mkdir(parents=True)
    paths = []
    for number in range(DOCUMENTS):
        lines = [f"# SciFact collection {number + 1}"]
        for record in records[number * ABSTRACTS_PER_DOCUMENT : (number + 1) * ABSTRACTS_PER_DOCUMENT]:
            lines.append(f"## {record['title'].strip()}")
            lines.extend(_paragraphs(record["text"]))
        path = folder / f"collection-{number + 1:02d}.md"
        path.write_text("\n\n".join(lines) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def edit_middle_paragraph(path: Path) -> None:
    """Append a sentence to the body paragraph in the middle of the document."""
    blocks = path.read_text(encoding="utf-8").split("\n\n")
    body = [i for i, block in enumerate(blocks) if block.strip() and not block.startswith("#")]
    middle = body[len(body) // 2]
    blocks[middle] = blocks[middle].rstrip("\n") + EDIT
    path.write_text("\n\n".join(blocks), encoding="utf-8")


def write_config(root: Path, name: str, folder: Path) -> Path:
    import yaml

    config = {
        "storage": {"data_dir": str(root / f"data-{name}")},
        "lancedb": {"databases": {name: str(root / f"{name}.lancedb")}},
        "ingester": {"databases": {name: {"sources": [{"root": str(folder)}]}}},
    }
    path = root / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def written_documents(run: dict) -> list[dict]:
    """The job lines of the documents the run wrote (each with chunks, embedded, reused)."""
    lines = []
    for line in Path(run["log"]).read_text().splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("event") == "job done" and event.get("action") == "written":
            lines.append(event)
    return lines


def written(run: dict) -> dict:
    lines = written_documents(run)
    return {"documents": len(lines), **{k: sum(e.get(k, 0) for e in lines) for k in ("chunks", "embedded", "reused")}}


def run_edit_scenario(corpus: Path, root: Path, run_batch: Callable[[Path], dict]) -> dict:
    folder = root / "docs"
    paths = build_documents(corpus, folder)
    config = write_config(root, "docs", folder)
    load_before = os.getloadavg()[0]

    first = run_batch(config)
    first_written = written(first)
    print(f"ingest: {first['summary']} in {first['seconds']:.1f}s, {first_written['chunks']} chunks", flush=True)
    for path in paths:
        edit_middle_paragraph(path)
    edit = run_batch(config)
    edit_written = written(edit)
    print(f"edit sync: {edit['summary']} in {edit['seconds']:.1f}s, {edit_written['embedded']} embedded", flush=True)

    fresh_folder = root / "fresh"
    shutil.copytree(folder, fresh_folder)
    full = run_batch(write_config(root, "fresh", fresh_folder))
    full_written = written(full)
    print(f"full re-ingest: {full['summary']} in {full['seconds']:.1f}s", flush=True)

    chunks_per_document = sorted(e.get("chunks", 0) for e in written_documents(first))
    return {
        "scenario": "edit",
        "documents": DOCUMENTS,
        "abstracts_per_document": ABSTRACTS_PER_DOCUMENT,
        "chunks": first_written["chunks"],
        "chunks_per_document_min": chunks_per_document[0] if chunks_per_document else None,
        "chunks_per_document_max": chunks_per_document[-1] if chunks_per_document else None,
        "ingest_s": round(first["seconds"], 2),
        "edit_sync_s": round(edit["seconds"], 2),
        "edit_sync_cpu_s": round(edit["cpu_seconds"], 1),
        "edit_embedded": edit_written["embedded"],
        "edit_reused": edit_written["reused"],
        "edit_documents_written": edit_written["documents"],
        "full_reingest_s": round(full["seconds"], 2),
        "full_reingest_cpu_s": round(full["cpu_seconds"], 1),
        "full_reingest_embedded": full_written["embedded"],
        "encoder_work_ratio": (
            round(full_written["embedded"] / edit_written["embedded"], 1) if edit_written["embedded"] else None
        ),
        "wall_time_ratio": round(full["seconds"] / edit["seconds"], 1),
        "cpu_time_ratio": round(full["cpu_seconds"] / edit["cpu_seconds"], 1),
        "summaries": [first["summary"], edit["summary"], full["summary"]],
        "returncodes": [first["returncode"], edit["returncode"], full["returncode"]],
        "load_average_before": round(load_before, 2),
        "load_average_after": round(os.getloadavg()[0], 2),
    }

