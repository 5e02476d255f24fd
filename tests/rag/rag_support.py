"""Helpers for the haiku.rag tests: a tiny corpus, database building, the CLI runners."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from haiku.core.config import AppConfig, config_from_dict
from haiku.core.models import Chunk, Document
from haiku.core.scope import DatabaseRef
from support import cli_env, run_main_in_process

# Short texts: the encoder is slow on this machine.
PAPERS = [
    ("Photosynthesis", ["Photosynthesis converts light energy into chemical energy in plants.",
                        "Chlorophyll absorbs red and blue light."]),
    ("Neural networks", ["Neural networks learn representations from data.",
                         "Backpropagation computes gradients for training."]),
    ("Volcanoes", ["Volcanoes erupt molten rock called lava."]),
]
WIKI = [
    ("Machine learning", ["Machine learning builds models that learn from data."]),
    ("Cooking pasta", ["Boil pasta in salted water for ten minutes."]),
    ("Plate tectonics", ["Earthquakes happen where tectonic plates meet."]),
]
EXTRA = ("Glaciers", ["Glaciers carve valleys as slow rivers of ice."])

HAIKU_RAG = Path(sys.executable).parent / "haiku-rag"


def config_data(data_dir: Path, databases: dict[str, Any] | None = None, **sections: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"storage": {"data_dir": str(data_dir), "auto_vacuum": False}}
    if databases is not None:
        data["lancedb"] = {"databases": {k: (str(v) if isinstance(v, Path) else v) for k, v in databases.items()}}
    for key, value in sections.items():
        data.setdefault(key, {}).update(value)
    return data


def build_config(data_dir: Path, databases: dict[str, Any] | None = None, **sections: Any) -> AppConfig:
    return config_from_dict(config_data(data_dir, databases, **sections))


async def add_document(store, embedder, title: str, texts: Sequence[str]) -> Document:
    vectors = await embedder.embed_documents(list(texts))
    return await store.writer().documents.upsert_document(
        Document(uri=f"file:///corpus/{store.name}/{title.replace(' ', '-')}.md", title=title, content="\n\n".join(texts)),
        [Chunk(content=text, order=i) for i, text in enumerate(texts)],
        vectors,
    )


async def add_document_at(path: Path, config: AppConfig, embedder, title: str, texts: Sequence[str]) -> Document:
    """Write a document as the ingester would, through a store of its own (a client's refuses the writer)."""
    from haiku.core.store import Store

    async with await Store.open(DatabaseRef.at(path), config) as store:
        return await add_document(store, embedder, title, texts)


async def build_database(path: Path, name: str, docs, embedder, config: AppConfig) -> dict[str, Document]:
    from haiku.core.store import Store

    store = await Store.open(DatabaseRef.configured(name, path), config, create=True)
    try:
        return {title: await add_document(store, embedder, title, texts) for title, texts in docs}
    finally:
        await store.close()


def cli(*args: str, config: Path | None = None, cwd: Path | None = None, input: str | None = None,
        program: Sequence[str] | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``haiku-rag`` (or ``program``) as a real subprocess; ``env`` adds to its environment."""
    command = [*(program or [str(HAIKU_RAG)])]
    if config is not None:
        command += ["--config", str(config)]
    command += list(args)
    return subprocess.run(
        command, capture_output=True, text=True, cwd=cwd, env=cli_env(**(env or {})), input=input, timeout=240
    )


def cli_all(*calls: tuple[tuple[str, ...], dict[str, Any]]) -> list[subprocess.CompletedProcess[str]]:
    """Independent invocations, run side by side (each pays its own start-up)."""
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = [pool.submit(cli, *args, **kwargs) for args, kwargs in calls]
        return [f.result() for f in futures]


def invoke(*args: str, config: Path | None = None, cwd: Path | None = None, input: str | None = None,
           program: Sequence[str] | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``cli`` run in this process (``support.run_main_in_process``): for tests of what a command
    prints and its exit status. With ``program`` (another interpreter, a probe of its own) it
    is ``cli``: start-up, import-time checks, signals and daemons keep a real process."""
    if program is not None:
        return cli(*args, config=config, cwd=cwd, input=input, program=program, env=env)
    from haiku.rag.cli import main

    argv = [str(HAIKU_RAG), *(["--config", str(config)] if config is not None else []), *args]
    return run_main_in_process(main, argv, env=env, cwd=cwd, input=input)


def invoke_all(*calls: tuple[tuple[str, ...], dict[str, Any]]) -> list[subprocess.CompletedProcess[str]]:
    """``cli_all`` in this process: the invocations one after another."""
    return [invoke(*args, **kwargs) for args, kwargs in calls]
