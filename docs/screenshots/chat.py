"""Draw docs/screenshots/chat.svg: the chat app after one question over two databases.

    python docs/screenshots/chat.py [OUTPUT.svg]

Two small databases (``papers`` and ``wiki``) are built in a temporary folder
with the default embedder; the model is the test suite's scripted
OpenAI-compatible server on 127.0.0.1 (tests/rag_qa/qa_scripted_model.py), so
the picture needs no language model. The app runs headless (Textual's
``run_test``) and saves what it shows with ``save_screenshot``.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "rag_qa"))

from qa_scripted_model import ScriptedModel, answer, call, chunk_ids_in, last_tool_result  # noqa: E402

OUTPUT = REPO / "docs" / "screenshots" / "chat.svg"
DOCUMENTS = {
    "papers": {
        "Photosynthesis": "Chlorophyll in plant leaves captures sunlight and turns carbon dioxide and water "
        "into glucose and oxygen.",
        "Pollination": "Bees carry pollen between flowers; about a third of the food crops people eat "
        "depend on animal pollinators.",
    },
    "wiki": {
        "Honey bees": "Honey bees tell their hive mates where flowers are with the waggle dance: the angle "
        "of the run gives the direction, its length the distance.",
        "Volcanoes": "Volcanic eruptions happen when magma rises through the crust and releases lava and gas.",
    },
}
QUESTION = "How do bees find flowers, and why does it matter?"
ANSWER = """Bees carry pollen between flowers, and about a third of the food crops people \
eat depend on such pollinators [1].

To find the flowers, honey bees **dance**: the angle of the waggle run tells their hive mates \
the direction, and its length the distance [2]."""


async def build(root: Path) -> dict[str, Path]:
    from haiku.core.config import config_from_dict
    from haiku.core.embedders import get_embedder
    from haiku.core.models import Chunk, Document
    from haiku.core.scope import DatabaseRef
    from haiku.core.store import Store

    config = config_from_dict({"storage": {"data_dir": str(root / "data")}})
    embedder = get_embedder(config)
    locations = {}
    for name, documents in DOCUMENTS.items():
        locations[name] = root / f"{name}.lancedb"
        store = await Store.open(DatabaseRef.configured(name, locations[name]), config, create=True)
        try:
            for title, text in documents.items():
                uri = f"file:///{name}/{title.lower().replace(' ', '-')}.md"
                chunks = [Chunk(order=0, content=text, headings=[title])]
                await store.writer().documents.upsert_document(
                    Document(uri=uri, title=title, content=f"# {title}\n\n{text}"),
                    chunks,
                    await embedder.embed_documents([text]),
                )
        finally:
            await store.close()
    return locations


def cite_what_was_found(request: dict) -> dict:
    return call("cite", chunk_ids=chunk_ids_in(last_tool_result(request))[:2])


async def shoot(output: Path) -> None:
    from textual.widgets import Input, Markdown

    from haiku.core.config import config_from_dict
    from haiku.rag.apps.chat.app import ChatApp
    from haiku.rag.client import HaikuRAG
    from haiku.rag.llm.model import ChatModel

    model = ScriptedModel()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        locations = await build(root)
        config = config_from_dict({
            "storage": {"data_dir": str(root / "data")},
            "lancedb": {"databases": {name: str(path) for name, path in locations.items()}},
            "qa": {"model": {"name": "qwen3", "base_url": model.base_url}},
        })
        model.play(call("search", query="bees find flowers pollination", limit=2), cite_what_was_found, answer(ANSWER))
        chat_model = ChatModel(config.qa.model)
        try:
            async with HaikuRAG(config=config, read_only=True) as client:
                app = ChatApp(client, chat_model)
                async with app.run_test(size=(120, 34)) as pilot:
                    app.query_one("#prompt", Input).value = QUESTION
                    await pilot.press("enter")
                    deadline = time.monotonic() + 120
                    while not [m for m in app.query("Markdown.answer") if isinstance(m, Markdown) and m.source]:
                        if time.monotonic() > deadline:
                            raise SystemExit("the answer never arrived")
                        await pilot.pause(0.1)
                    await pilot.pause(0.5)
                    output.parent.mkdir(parents=True, exist_ok=True)
                    app.save_screenshot(filename=output.name, path=str(output.parent))
        finally:
            await chat_model.aclose()
            model.close()
    print(f"wrote {output}")


if __name__ == "__main__":
    asyncio.run(shoot(Path(sys.argv[1]) if len(sys.argv) > 1 else OUTPUT))
