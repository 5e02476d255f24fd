"""A small hand-written corpus for the federation quality tests (not SciFact: it must stay fast).

Nine topics of five short documents each, with some vocabulary shared across
topics (heat, pressure, cells, stars, networks...) so that full-text statistics
and vector neighbourhoods both matter, and twelve queries worded apart from the
documents.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

DOCUMENTS: dict[str, str] = {
    # astronomy
    "astro-1": "Red giant stars swell as they burn the last hydrogen around their helium core.",
    "astro-2": "A neutron star is the collapsed core left after a massive star explodes as a supernova.",
    "astro-3": "Exoplanets are found by the small dip in a star's light when a planet passes in front of it.",
    "astro-4": "The cosmic microwave background is faint radiation left over from the hot early universe.",
    "astro-5": "Black holes bend light so strongly that nothing escapes once it crosses the event horizon.",
    # cardiology
    "heart-1": "High blood pressure strains the heart and narrows arteries over many years.",
    "heart-2": "An irregular heartbeat such as atrial fibrillation raises the risk of stroke.",
    "heart-3": "Statins lower cholesterol in the blood and reduce the chance of a heart attack.",
    "heart-4": "Cardiac muscle cells contract together because electrical signals spread through them.",
    "heart-5": "Regular aerobic exercise lowers resting heart rate and blood pressure in adults.",
    # cooking
    "cook-1": "Searing meat at high heat browns the surface through the Maillard reaction.",
    "cook-2": "Bread dough rises because yeast ferments sugar and releases carbon dioxide gas.",
    "cook-3": "A pressure cooker raises the boiling point of water so beans soften much faster.",
    "cook-4": "Emulsions like mayonnaise keep oil and lemon juice together with egg yolk.",
    "cook-5": "Slow braising turns tough cuts of beef tender as collagen melts into gelatin.",
    # gardening
    "garden-1": "Tomato plants need full sun, steady watering and support stakes as they grow.",
    "garden-2": "Compost adds organic matter to soil and feeds the worms and microbes living in it.",
    "garden-3": "Pruning roses in late winter encourages strong new shoots and more flowers.",
    "garden-4": "Aphids suck sap from young leaves; ladybirds eat them and protect the garden.",
    "garden-5": "Seeds germinate when the soil is warm and moist enough for the embryo to grow.",
    # programming
    "code-1": "Python uses indentation to mark blocks of code instead of curly braces.",
    "code-2": "A hash table finds values by key in constant time on average.",
    "code-3": "Garbage collection frees memory that a running program can no longer reach.",
    "code-4": "Unit tests check small pieces of a program so regressions are caught early.",
    "code-5": "Rust's borrow checker prevents data races by tracking who owns each value.",
    # football
    "ball-1": "A penalty kick is awarded when a defender fouls an attacker inside the box.",
    "ball-2": "The offside rule stops attackers from waiting behind the last defender.",
    "ball-3": "Goalkeepers are the only players allowed to handle the ball in their own area.",
    "ball-4": "The World Cup is held every four years and draws billions of television viewers.",
    "ball-5": "A hat trick means one player scores three goals in a single match.",
    # volcanoes
    "volcano-1": "Magma rises through the crust and erupts as lava when pressure builds below a volcano.",
    "volcano-2": "Volcanic ash clouds can ground aircraft because the glassy particles damage jet engines.",
    "volcano-3": "Hawaiian volcanoes form over a hot spot as the Pacific plate drifts across it.",
    "volcano-4": "Pyroclastic flows are fast avalanches of hot gas and rock racing down a volcano.",
    "volcano-5": "Geologists watch small earthquakes and ground swelling to forecast eruptions.",
    # jazz
    "jazz-1": "Bebop musicians played fast tempos with complex chord changes and long solos.",
    "jazz-2": "Louis Armstrong's trumpet and singing made improvised solos central to jazz.",
    "jazz-3": "A walking bass line plays one note on every beat to drive a swing rhythm.",
    "jazz-4": "Modal jazz, as on Kind of Blue, improvises over scales rather than chords.",
    "jazz-5": "Big bands of the swing era had sections of saxophones, trumpets and trombones.",
    # finance
    "money-1": "Compound interest earns returns on earlier returns, so savings grow faster over time.",
    "money-2": "Index funds spread money across a whole market at very low fees.",
    "money-3": "Inflation erodes the buying power of cash held in a savings account.",
    "money-4": "Central banks raise interest rates to cool demand and slow rising prices.",
    "money-5": "Diversifying investments across assets lowers the risk of a large loss.",
}

QUERIES: list[str] = [
    "what happens to a star when it dies",
    "how to lower blood pressure",
    "why does bread rise",
    "cooking beans quickly",
    "keeping pests off plants",
    "memory management in programming languages",
    "rules about fouls in soccer",
    "predicting when a volcano will erupt",
    "improvisation in jazz music",
    "protecting savings from rising prices",
    "heat and pressure",
    "cells signals",
]


LAYOUTS = {"one": ["all"], "three": ["part-1", "part-2", "part-3"]}


def layout_config(root: Path, layout: str, fusion: str = "rrf", fts_idf: str = "global"):
    """An AppConfig naming the layout's databases under root."""
    from haiku.core.config import config_from_dict

    return config_from_dict(
        {
            "storage": {"data_dir": str(root / "data"), "auto_vacuum": False},
            "lancedb": {"databases": {name: str(root / layout / f"{name}.lancedb") for name in LAYOUTS[layout]}},
            "search": {"fusion": fusion, "fts_idf": fts_idf},
        }
    )


async def build_databases(root: Path, embedder: Any) -> None:
    """Write the corpus into one database and, split by the benchmark's rule, into three.

    Every document is one chunk, written through ``Store.upsert_document`` with the
    real model's vectors (embedded once, shared by both layouts).
    """
    from bench.quality_layouts import split

    from haiku.core.models import Chunk, Document
    from haiku.core.scope import DatabaseRef
    from haiku.core.store import Store

    ids = list(DOCUMENTS)
    vectors = dict(zip(ids, await embedder.embed_documents([DOCUMENTS[i] for i in ids]), strict=True))
    for layout, names in LAYOUTS.items():
        config = layout_config(root, layout)
        for name, part in zip(names, split(ids, ids, [1.0] * len(names)), strict=True):
            ref = DatabaseRef.configured(name, root / layout / f"{name}.lancedb")
            store = await Store.open(ref, config, create=True)
            try:
                for doc_id in part:
                    await store.writer().documents.upsert_document(
                        Document(uri=f"fixture://{doc_id}", title=doc_id, content=DOCUMENTS[doc_id]),
                        [Chunk(order=0, content=DOCUMENTS[doc_id])],
                        [vectors[doc_id]],
                    )
            finally:
                await store.close()
