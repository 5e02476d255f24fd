"""Build the quality benchmark's databases through the project's own write path.

documents → chunks (the ingester's converter: plain text, docling's
HybridChunker at ``processing.chunk_size`` with the embedding model's
tokenizer) → embeddings (of each chunk's ``embed_text``, as the ingester embeds
them) → ``Store.load_documents`` (bench/layout_build.py, shared with the search
benchmark).

Everything expensive is cached under one directory per fingerprint of what
determines the result (corpus bytes, chunk size, embedder identity, store
schema version):

- ``chunks-<size>.jsonl``: the converter's chunks of every document;
- the embedding cache (shared by every layout and run);
- ``<layout>/<database>.lancedb`` plus ``<layout>/manifest.json``, written once
  the layout's databases hold every document. An interrupted build resumes:
  documents already stored (by uri) are not written again.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench import layout_build
from bench.beir import BeirDoc
from bench.embed_cache import EmbeddingCache
from bench.layout_build import databases_config
from bench.quality_layouts import Layout, split

if TYPE_CHECKING:
    from haiku.core.store.writes import DocumentWrite

Log = Callable[[str], None]


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class DocChunks:
    """One corpus document as the pipeline converts and chunks it."""

    doc_id: str
    title: str
    content: str
    chunks: list[dict[str, Any]]  # content, embed_text, headings, page_numbers

    @property
    def embed_texts(self) -> list[str]:
        return [c["embed_text"] for c in self.chunks]


def doc_uri(dataset: str, doc_id: str) -> str:
    return f"beir://{dataset}/{doc_id}"


def doc_id_of(uri: str | None) -> str | None:
    """The corpus id a stored document's uri carries."""
    if not uri or not uri.startswith("beir://"):
        return None
    return uri.rsplit("/", 1)[-1]


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fingerprint(*parts: object) -> str:
    return hashlib.sha256(json.dumps([str(p) for p in parts]).encode()).hexdigest()[:16]


# --- chunking ---------------------------------------------------------------------------


def chunk_corpus(docs: Sequence[BeirDoc], path: Path, chunk_size: int, log: Log = _stderr) -> list[DocChunks]:
    """The converter's chunks of every document, computed once and kept in ``path``."""
    if path.exists():
        by_id = {}
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                by_id[row["doc_id"]] = DocChunks(**row)
        if all(d.id in by_id for d in docs):
            return [by_id[d.id] for d in docs]
    from haiku.core.convert.converter import Converter  # bench code may use the ingester
    from haiku.core.embedders import local_model_path

    converter = Converter(tokenizer_dir=local_model_path(), chunk_size=chunk_size)
    out: list[DocChunks] = []
    started = time.perf_counter()
    for i, doc in enumerate(docs, 1):
        converted = converter.convert(name=f"{doc.id}.txt", fmt="text", data=doc.full_text.encode("utf-8"))
        chunks = [
            {
                "content": c.content,
                "embed_text": c.embed_text,
                "headings": list(c.headings),
                "page_numbers": list(c.page_numbers),
            }
            for c in converted.chunks
        ]
        out.append(DocChunks(doc.id, doc.title, converted.content, chunks))
        if i % 1000 == 0 or i == len(docs):
            log(f"chunked {i}/{len(docs)} documents ({time.perf_counter() - started:.0f}s)")
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for d in out:
            fh.write(json.dumps(d.__dict__, ensure_ascii=False) + "\n")
    tmp.replace(path)
    return out


# --- databases --------------------------------------------------------------------------


def layout_locations(layout: Layout, root: Path) -> dict[str, Path]:
    return {name: root / layout.name / f"{name}.lancedb" for name in layout.database_names()}


def layout_config(layout: Layout, root: Path, chunk_size: int, **search: Any):
    """An AppConfig naming the layout's databases (configured order = part order)."""
    return databases_config(
        layout_locations(layout, root), root / "data", processing={"chunk_size": chunk_size}, search=search
    )


def _writes(docs: Sequence[DocChunks], dataset: str, cache: EmbeddingCache) -> Iterator[DocumentWrite]:
    from haiku.core.models import Chunk, Document

    for doc in docs:
        chunks = [
            Chunk(order=i, content=c["content"], headings=c["headings"], page_numbers=c["page_numbers"])
            for i, c in enumerate(doc.chunks)
        ]
        document = Document(
            uri=doc_uri(dataset, doc.doc_id), title=doc.title, content=doc.content, metadata={"beir_id": doc.doc_id}
        )
        yield document, chunks, cache.get(doc.embed_texts).tolist()


async def build_layout(
    layout: Layout,
    root: Path,
    docs: Sequence[DocChunks],
    dataset: str,
    cache: EmbeddingCache,
    chunk_size: int,
    log: Log = _stderr,
) -> dict[str, Any]:
    """The layout's databases, built unless a complete build is cached; returns its manifest."""
    parts = split(list(docs), [d.doc_id for d in docs], layout.weights)
    return await layout_build.build_layout(
        root / layout.name / "manifest.json",
        layout_config(layout, root, chunk_size),
        {name: _writes(part, dataset, cache) for name, part in zip(layout.database_names(), parts, strict=True)},
        len(docs),
        lambda line: log(f"[{layout.name}] {line}"),
        layout=layout.name,
    )
