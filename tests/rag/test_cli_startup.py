"""A `haiku-rag` process loads only what its command needs (docs/cli.md, "Start-up time").

Each command runs as a real process; at exit it reports which of the heavy
modules it imported. A search over two databases embeds its query without
torch, and LanceDB comes without its REST namespace client or pandas (nor the
`lance` package, whose tokenizer a word no chunk spells would need: it is counted), and
nothing loads PIL or docling (only `visualize` draws, only a conversion converts); a
read-only command never loads the file-lock library, and only the screens
load Textual.
"""

from __future__ import annotations

import subprocess
import sys

from rag_support import config_data

from support import cli_env, write_config

HEAVY = (
    "torch", "transformers", "sentence_transformers", "pandas", "lance_namespace_urllib3_client.api", "structlog",
    "filelock", "lancedb", "lance", "textual", "textual_serve", "aiohttp", "PIL", "docling", "docling_core",
    "haiku.core.embedders.multimodal", "haiku.rag.client._image_search",
)
# A command ends its process without unwinding (haiku.core.process_exit): the report rides on that exit.
REPORT = (
    "import os, sys\n"
    f"report = lambda: print('LOADED', *[m for m in {HEAVY!r} if m in sys.modules], file=sys.stderr)\n"
    "leave = os._exit\n"
    "os._exit = lambda code: (report(), leave(code))\n"
    "sys.argv = ['haiku-rag', *sys.argv[1:]]\n"
    "from haiku.rag.cli import main\n"
    "main()\n"
)


def _loaded(*args: str) -> tuple[int, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", REPORT, *args], capture_output=True, text=True, env=cli_env(), timeout=240
    )
    lines = [line for line in done.stderr.splitlines() if line.startswith("LOADED")]
    assert lines, done.stderr
    return done.returncode, lines[-1].split()[1:]


def test_help_imports_no_database_or_model_library():
    code, loaded = _loaded("--help")
    assert (code, loaded) == (0, [])


def test_a_federated_search_loads_lancedb_but_no_torch_pandas_rest_client_or_tokenizer(built, tmp_path):
    config = write_config(
        tmp_path / "haiku.rag.yaml",
        config_data(tmp_path / "data", {"papers": str(built["papers"]), "wiki": str(built["wiki"])}),
    )
    for search_type in ("hybrid", "fts"):
        # No chunk of wiki spells "photosynthesis" or "plants".
        code, loaded = _loaded("--config", str(config), "search", "-s", search_type, "photosynthesis in plants")
        assert (code, loaded) == (0, ["lancedb"]), search_type


def test_list_loads_lancedb_but_no_textual(built, tmp_path):
    config = write_config(tmp_path / "haiku.rag.yaml", config_data(tmp_path / "data", {"papers": str(built["papers"])}))
    code, loaded = _loaded("--config", str(config), "list")
    assert (code, loaded) == (0, ["lancedb"])
