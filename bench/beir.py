"""Load a dataset in the BEIR layout: corpus.jsonl, queries.jsonl, qrels.tsv.

The document text is ``title + " " + text``, the convention of BEIR's dense
retrieval baselines (and so of the published all-MiniLM-L6-v2 figures).
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

Qrels = dict[str, dict[str, int]]


@dataclass(frozen=True)
class BeirDoc:
    id: str
    title: str
    text: str

    @property
    def full_text(self) -> str:
        return f"{self.title} {self.text}".strip()


@dataclass(frozen=True)
class BeirDataset:
    name: str
    corpus: list[BeirDoc]
    queries: dict[str, str]
    qrels: Qrels

    @property
    def judged_queries(self) -> dict[str, str]:
        """Queries with at least one relevant document, the ones every metric averages over."""
        return {
            qid: text
            for qid, text in self.queries.items()
            if any(rel > 0 for rel in self.qrels.get(qid, {}).values())
        }


def _require(path: Path) -> Path:
    if not path.is_file():
        raise FileNotFoundError(f"BEIR dataset file not found: {path}")
    return path


def load_corpus(path: Path) -> list[BeirDoc]:
    docs: list[BeirDoc] = []
    with _require(path).open(encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                docs.append(BeirDoc(id=str(row["_id"]), title=row.get("title") or "", text=row.get("text") or ""))
            except (json.JSONDecodeError, KeyError) as exc:
                raise ValueError(f"{path}:{line_no}: not a BEIR corpus row ({exc})") from exc
    ids = [d.id for d in docs]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{path}: duplicate document ids")
    return docs


def load_queries(path: Path) -> dict[str, str]:
    queries: dict[str, str] = {}
    with _require(path).open(encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                queries[str(row["_id"])] = row["text"]
            except (json.JSONDecodeError, KeyError) as exc:
                raise ValueError(f"{path}:{line_no}: not a BEIR query row ({exc})") from exc
    return queries


def load_qrels(path: Path) -> Qrels:
    """``query-id  corpus-id  score`` rows, tab separated, after one header line."""
    qrels: Qrels = {}
    with _require(path).open(encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh, delimiter="\t")
        header = next(reader, None)
        if header is None:
            return qrels
        for line_no, row in enumerate(reader, 2):
            if not row:
                continue
            if len(row) != 3:
                raise ValueError(f"{path}:{line_no}: expected 3 tab-separated fields, got {len(row)}")
            qid, did, score = row
            qrels.setdefault(qid, {})[did] = int(score)
    return qrels


def load_beir(root: Path, split_file: str = "qrels.tsv") -> BeirDataset:
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"BEIR dataset directory not found: {root}")
    return BeirDataset(
        name=root.name,
        corpus=load_corpus(root / "corpus.jsonl"),
        queries=load_queries(root / "queries.jsonl"),
        qrels=load_qrels(root / split_file),
    )
