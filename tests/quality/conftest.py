"""Quality tests import the benchmark helpers under bench/ (pure modules, no model)."""

from __future__ import annotations

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))


import pytest  # noqa: E402
from bench.quality_layouts import split  # noqa: E402
from fixture_corpus import DOCUMENTS  # noqa: E402

LAYOUTS = {"one": ["all"], "three": ["part-1", "part-2", "part-3"]}


def _layout_config(root: Path, layout: str, fusion: str):
    from haiku.core.config import config_from_dict

    return config_from_dict(
        {
            "storage": {"data_dir": str(root / "data"), "auto_vacuum": False},
            "lancedb": {"databases": {name: str(root / layout / f"{name}.lancedb") for name in LAYOUTS[layout]}},
            "search": {"fusion": fusion},
        }
    )


@pytest.fixture(scope="session")
async def federation_fixture(tmp_path_factory, embedder):
    """The fixture corpus written once into one database and once split over three.

    Returns ``config(layout, fusion="rrf")``, an AppConfig naming the layout's databases.
    Every document is one chunk, written through ``Store.upsert_document`` with the
    real model's vectors (embedded once, shared by both layouts).
    """
    from haiku.core.models import Chunk, Document
    from haiku.core.scope import DatabaseRef
    from haiku.core.store import Store

    root = tmp_path_factory.mktemp("federation")
    ids = list(DOCUMENTS)
    vectors = dict(zip(ids, await embedder.embed_documents([DOCUMENTS[i] for i in ids]), strict=True))
    for layout, names in LAYOUTS.items():
        config = _layout_config(root, layout, "rrf")
        for name, part in zip(names, split(ids, ids, [1.0] * len(names)), strict=True):
            store = await Store.open(DatabaseRef.configured(name, root / layout / f"{name}.lancedb"), config, create=True)
            try:
                for doc_id in part:
                    await store.upsert_document(
                        Document(uri=f"fixture://{doc_id}", title=doc_id, content=DOCUMENTS[doc_id]),
                        [Chunk(order=0, content=DOCUMENTS[doc_id])],
                        [vectors[doc_id]],
                    )
            finally:
                await store.close()
    return lambda layout, fusion="rrf": _layout_config(root, layout, fusion)
