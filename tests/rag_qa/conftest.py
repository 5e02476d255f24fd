"""Fixtures for ask, the RAG capability, citations, the sandbox and MCP.

Three real databases are built once per session: ``papers`` (3 documents),
``wiki`` (2 documents) and ``mirror``, a copy of papers' directory, so every
document and chunk id in it is also in papers, the way a copied database
shares ids. The model is ``ScriptedModel`` (see qa_scripted_model.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from qa_scripted_model import ScriptedModel

from support import copy_database

PAPERS = [
    (
        "Photosynthesis",
        [
            (["Photosynthesis"], "Chlorophyll in plant leaves captures sunlight and turns carbon dioxide and water into glucose and oxygen."),
            (["Photosynthesis", "Light reactions"], "The light reactions run in the thylakoid membranes and make ATP and NADPH."),
        ],
    ),
    ("Protein folding", [(["Protein folding"], "Proteins fold into three-dimensional shapes set by their amino acid sequence; chaperones help.")]),
    ("Vaccines", [(["Vaccines"], "Vaccines train the immune system with harmless antigens so memory B cells recognise a pathogen later.")]),
]
WIKI = [
    ("Volcanoes", [(["Volcanoes"], "Volcanic eruptions happen when magma rises through the crust and releases lava and gas.")]),
    ("Honey bees", [(["Honey bees"], "Honey bees tell their hive mates where flowers are with the waggle dance.")]),
]


@dataclass(frozen=True)
class Databases:
    root: Path
    locations: dict[str, Path]
    documents: dict[str, dict[str, str]]
    """database -> document title -> document id"""
    chunks: dict[str, dict[str, list[str]]]
    """database -> document title -> chunk ids in order"""

    def doc(self, database: str, title: str) -> str:
        return self.documents[database][title]

    def chunk(self, database: str, title: str, position: int = 0) -> str:
        return self.chunks[database][title][position]


async def _build(name: str, path: Path, spec: list, embedder: Any, config: Any) -> tuple[dict, dict]:
    from haiku.core.models import Chunk, Document
    from haiku.core.scope import DatabaseRef
    from haiku.core.store import Store

    store = await Store.open(DatabaseRef.configured(name, path), config, create=True)
    documents: dict[str, str] = {}
    chunks: dict[str, list[str]] = {}
    try:
        for title, parts in spec:
            content = "\n\n".join(f"{'#' * len(h)} {h[-1]}\n\n{text}" for h, text in parts)
            texts = [text for _, text in parts]
            vectors = await embedder.embed_documents(texts)
            stored = await store.writer().documents.upsert_document(
                Document(uri=f"file:///{name}/{title.lower().replace(' ', '-')}.md", title=title, content=content),
                [Chunk(order=i, content=text, headings=list(h)) for i, (h, text) in enumerate(parts)],
                vectors,
            )
            assert stored.id is not None
            documents[title] = stored.id
            chunks[title] = [c.id for c in await store.reads.get_chunks(stored.id) if c.id]
    finally:
        await store.close()
    return documents, chunks


@pytest.fixture(scope="session")
async def qa_databases(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Databases:
    from haiku.core.config import config_from_dict

    root = tmp_path_factory.mktemp("qa-dbs")
    config = config_from_dict({"storage": {"data_dir": str(root / "data")}})
    locations = {"papers": root / "papers.lancedb", "wiki": root / "wiki.lancedb", "mirror": root / "mirror.lancedb"}
    papers_docs, papers_chunks = await _build("papers", locations["papers"], PAPERS, embedder, config)
    wiki_docs, wiki_chunks = await _build("wiki", locations["wiki"], WIKI, embedder, config)
    # A copied database: the real way two databases come to share ids.
    copy_database(locations["papers"], locations["mirror"])
    return Databases(
        root=root,
        locations=locations,
        documents={"papers": papers_docs, "wiki": wiki_docs, "mirror": dict(papers_docs)},
        chunks={"papers": papers_chunks, "wiki": wiki_chunks, "mirror": dict(papers_chunks)},
    )


@pytest.fixture(scope="session")
def scripted_model() -> Any:
    model = ScriptedModel()
    yield model
    model.close()


@pytest.fixture
def model(scripted_model: ScriptedModel) -> ScriptedModel:
    """The session's scripted model with an empty script and no recorded requests."""
    return scripted_model.play()


@pytest.fixture
def qa_config(qa_databases: Databases, scripted_model: ScriptedModel, tmp_path: Path) -> Callable[..., Any]:
    """An AppConfig naming the given databases, in order, with qa.model at the scripted model."""
    from haiku.core.config import config_from_dict

    def build(*names: str, **sections: Any) -> Any:
        data: dict[str, Any] = {
            "storage": {"data_dir": str(tmp_path / "data")},
            "lancedb": {"databases": {n: str(qa_databases.locations[n]) for n in names}},
            "qa": {"model": {"name": "scripted", "base_url": scripted_model.base_url}, "request_limit": 8},
        }
        for key, value in sections.items():
            data.setdefault(key, {}).update(value)
        return config_from_dict(data)

    return build


@pytest.fixture
def open_client(qa_config: Callable[..., Any]) -> Callable[..., Any]:
    """``async with open_client("papers", "wiki") as client`` over those databases."""
    from haiku.rag.client import HaikuRAG

    def make(*names: str, **sections: Any) -> HaikuRAG:
        return HaikuRAG(config=qa_config(*names, **sections), read_only=True)

    return make
