"""A reading client caps the allocator's arenas, so memory freed by many threads is reused (docs/storage.md, "Memory").

Runs in a fresh process (arenas, once made, stay): a client over a real
database is entered, then eight threads allocate at once, and glibc's own
report (``malloc_info``) says how many arenas the process has.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from rag_support import config_data

from support import cli_env, write_config

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator")

SCRIPT = """
import asyncio, ctypes, sys, threading
from haiku.core.config import load_config
from haiku.rag.client import HaikuRAG

async def enter():
    async with HaikuRAG(config=load_config(sys.argv[1]), read_only=True) as client:
        await client.list_documents(limit=1)

asyncio.run(enter())
start = threading.Barrier(8)
def allocate():
    start.wait()
    kept = [bytearray(4096) for _ in range(2000)]
threads = [threading.Thread(target=allocate) for _ in range(8)]
for thread in threads: thread.start()
for thread in threads: thread.join()
libc = ctypes.CDLL(None)
libc.fopen.restype = ctypes.c_void_p
libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
libc.fclose.argtypes = [ctypes.c_void_p]
report = libc.fopen(sys.argv[2].encode(), b"w")
libc.malloc_info(0, report)
libc.fclose(report)
"""


def _arenas(tmp_path, config, **env: str) -> int:
    report = tmp_path / "malloc.xml"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(config), str(report)], capture_output=True, text=True,
        env=cli_env(**env), timeout=240,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return report.read_text().count("<heap nr=")


def test_a_reading_client_caps_the_malloc_arenas_its_threads_use(built, tmp_path):
    config = write_config(tmp_path / "haiku.rag.yaml", config_data(tmp_path / "data", {"papers": str(built["papers"])}))
    assert _arenas(tmp_path, config) <= 2


def test_malloc_arena_max_in_the_environment_wins(built, tmp_path):
    config = write_config(tmp_path / "haiku.rag.yaml", config_data(tmp_path / "data", {"papers": str(built["papers"])}))
    assert _arenas(tmp_path, config, MALLOC_ARENA_MAX="5") > 2
