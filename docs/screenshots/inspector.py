"""The inspector's screenshots in docs/cli.md, made from two small databases built here.

    python docs/screenshots/inspector.py            # docs/screenshots/inspector.svg (Textual's save_screenshot)
    python docs/screenshots/inspector.py --browser  # and docs/screenshots/inspector-browser.png

The terminal one drives the inspector headless with Textual's pilot; the
browser one serves it (`haiku-rag inspect --serve`) and photographs the page
with headless Chromium (Debian's `chromium` package) through its DevTools
protocol, once the inspector has painted. The databases are built with the
configured embedding model, offline, in a temporary directory.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

IMAGES = Path(__file__).resolve().parent
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--hide-scrollbars", "--window-size=1500,900",
]

PAPERS = [
    ("Photosynthesis in C4 plants", [
        (["Photosynthesis in C4 plants", "Abstract"], [1], "C4 plants fix carbon in mesophyll cells and release it "
         "around Rubisco in the bundle sheath, which suppresses photorespiration."),
        (["Photosynthesis in C4 plants", "Methods"], [1, 2], "Leaf discs were sampled at dawn and noon; gas "
         "exchange was measured at 400 ppm CO2."),
        (["Photosynthesis in C4 plants", "Results"], [2], "Net assimilation rose by 18% under high light while "
         "stomatal conductance fell."),
    ]),
    ("Volcanic ash and aviation", [
        (["Volcanic ash and aviation"], [1], "Ash clouds melt in jet engines above 1100 °C and glaze the turbine."),
    ]),
    ("Graph neural networks", [
        (["Graph neural networks", "Message passing"], [3], "Each layer aggregates the features of a node's "
         "neighbours and updates its own representation."),
    ]),
]
HANDBOOK = [
    ("Field safety", [
        (["Field safety", "Before you go"], [], "Leave your route and return time with the station."),
        (["Field safety", "On the crater rim"], [], "Wear a helmet and carry a gas monitor near fumaroles."),
    ]),
    ("Sample handling", [
        (["Sample handling"], [], "Seal ash samples in labelled jars and log their coordinates."),
    ]),
]


async def build(root: Path) -> Path:
    """Two databases, papers and handbook, and a configuration naming them."""
    from haiku.core.config import config_from_dict, load_config
    from haiku.core.embedders import get_embedder
    from haiku.core.models import Chunk, Document
    from haiku.core.scope import DatabaseRef
    from haiku.core.store import Store

    text = (
        f"storage:\n  data_dir: {root / 'data'}\n  auto_vacuum: false\nlancedb:\n  databases:\n"
        f"    papers: {root / 'papers.lancedb'}\n    handbook: {root / 'handbook.lancedb'}\n"
    )
    config_path = root / "haiku.rag.yaml"
    config_path.write_text(text, encoding="utf-8")
    config = load_config(config_path)
    embedder = get_embedder(config_from_dict({}))
    for name, documents in (("papers", PAPERS), ("handbook", HANDBOOK)):
        store = await Store.open(DatabaseRef.configured(name, root / f"{name}.lancedb"), config, create=True)
        try:
            for title, chunks in documents:
                texts = [t for _, _, t in chunks]
                await store.writer().documents.upsert_document(
                    Document(uri=f"file:///srv/{name}/{title.lower().replace(' ', '-')}.pdf", title=title,
                             content="\n\n".join(texts)),
                    [Chunk(content=t, order=i, headings=h, page_numbers=p) for i, (h, p, t) in enumerate(chunks)],
                    await embedder.embed_documents(texts),
                )
        finally:
            await store.close()
    return config_path


async def terminal_screenshot(config_path: Path, target: Path) -> None:
    from haiku.core.config import load_config
    from haiku.rag.apps.inspector import Catalog
    from haiku.rag.apps.inspector.app import InspectorApp
    from haiku.rag.client import HaikuRAG

    async with HaikuRAG(config=load_config(config_path), read_only=True) as client:
        app = InspectorApp(Catalog(client))
        async with app.run_test(size=(150, 42)) as pilot:
            await _until(pilot, lambda: len(app.chunks) == 3)
            app.query_one("#chunks").focus()
            await pilot.pause()  # focus moves on the next turn of the loop
            await pilot.press("down")
            await _until(pilot, lambda: app.chunk is not None and app.chunk.order == 1)
            await pilot.pause(1.0)  # the page pane and the chunk counts
            app.save_screenshot(filename=target.name, path=str(target.parent))


async def _until(pilot, condition, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit("the inspector did not get there in time")
        await pilot.pause(0.1)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def _devtools_screenshot(devtools: str, url: str, target: Path, settle: float) -> None:
    import json

    import aiohttp

    async with aiohttp.ClientSession() as session:
        async with session.get(f"{devtools}/json/list") as listing:
            page = next(t for t in await listing.json() if t["type"] == "page")
        async with session.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0) as ws:
            serial = 0

            async def call(method: str, **params) -> dict:
                nonlocal serial
                serial += 1
                await ws.send_str(json.dumps({"id": serial, "method": method, "params": params}))
                while True:
                    answer = json.loads((await ws.receive()).data)
                    if answer.get("id") == serial:
                        return answer.get("result", {})

            await call("Page.enable")
            await call("Page.navigate", url=url)
            await asyncio.sleep(settle)  # the page opens its websocket and the inspector paints
            shot = await call("Page.captureScreenshot", format="png")
    target.write_bytes(base64.b64decode(shot["data"]))


def browser_screenshot(config_path: Path, target: Path, chromium: str, settle: float) -> None:
    port = _free_port()
    haiku_rag = str(Path(sys.executable).parent / "haiku-rag")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    server = subprocess.Popen(
        [haiku_rag, "--config", str(config_path), "inspect", "--serve", "--port", str(port)],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env,
    )
    profile = tempfile.mkdtemp(prefix="inspector-chromium-")
    browser = None
    try:
        assert server.stderr is not None
        for line in server.stderr:
            if line.startswith("Serving the inspector on "):
                break
        else:
            raise SystemExit(f"haiku-rag inspect --serve exited {server.wait()}")
        time.sleep(1.0)
        browser = subprocess.Popen(
            [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--remote-debugging-port=0", "about:blank"],
            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
        )
        assert browser.stderr is not None
        devtools = None
        for line in browser.stderr:
            found = re.search(r"DevTools listening on ws://([^/]+)/", line)
            if found:
                devtools = f"http://{found.group(1)}"
                break
        if devtools is None:
            raise SystemExit(f"chromium exited {browser.wait()} without opening DevTools")
        asyncio.run(_devtools_screenshot(devtools, f"http://127.0.0.1:{port}/", target, settle))
    finally:
        if browser is not None:
            browser.terminate()
            browser.wait(timeout=30)
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(profile, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--browser", action="store_true", help="also take the browser screenshot")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    parser.add_argument("--settle", type=float, default=12.0, help="seconds the page is given to paint")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    with tempfile.TemporaryDirectory(prefix="inspector-screenshots-") as tmp:
        config_path = asyncio.run(build(Path(tmp)))
        asyncio.run(terminal_screenshot(config_path, IMAGES / "inspector.svg"))
        print(IMAGES / "inspector.svg")
        if args.browser:
            if shutil.which(args.chromium) is None:
                raise SystemExit(f"{args.chromium} is not installed (Debian: apt-get install chromium)")
            browser_screenshot(config_path, IMAGES / "inspector-browser.png", args.chromium, args.settle)
            print(IMAGES / "inspector-browser.png")


if __name__ == "__main__":
    main()
