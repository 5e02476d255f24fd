"""Helpers every package's tests share: a CLI subprocess's environment, a command run in process,
a config on disk, a database copy.

``tests/`` holds the root ``conftest.py``, so pytest puts it on ``sys.path``
and any test module can ``from support import …``. What only one package's
tests need stays in that package's own support module.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

import yaml

_encoder_export = threading.Lock()
_encoder_exported = False


def export_query_encoder() -> None:
    """Export the query encoder into the session's model cache (tests/conftest.py) once.

    Called before the first CLI subprocess starts, so that no two subprocesses export
    it at once; a session that starts none (configuration tests, say) never pays for it.
    """
    global _encoder_exported
    with _encoder_export:
        if not _encoder_exported:
            from haiku.core.config import AppConfig
            from haiku.core.embedders import get_embedder

            get_embedder(AppConfig()).prepare_query_encoder()  # type: ignore[attr-defined]
            _encoder_exported = True


def cli_env(**extra: str) -> dict[str, str]:
    """This process's environment for a CLI subprocess, with ``extra`` on top.

    Offline model loading; no ``HAIKU_RAG_*`` variable the developer's shell may
    set (a config path, say) and no systemd ``NOTIFY_SOCKET`` leak in. The query
    encoder is exported first (``export_query_encoder``).
    """
    export_query_encoder()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HAIKU_RAG_") and k != "NOTIFY_SOCKET"}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    env.update(extra)
    return env


def write_config(path: Path, data: dict[str, Any]) -> Path:
    """Write ``data`` as a YAML config file, keys in the order given."""
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def copy_database(source: Path, target: Path) -> Path:
    """A copy of a database directory, without its lock files (a copy is nobody's lock)."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(".haiku-*.lock"))
    return target


def absolute_import(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The module a ``from … import`` statement in ``module`` names, its leading dots resolved."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base.pop()
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


async def as_schema_version(location: Path, version: int) -> None:
    """Rewrite a local database as the code of schema ``version`` (1, 2 or 3) left it.

    Before version 4: no picture_vectors table. Before version 3: no structure
    columns, no document_items or page_images table, settings without the
    processing column; before version 2: no revision column either.
    """
    import shutil as _shutil

    import lancedb
    import pyarrow as pa

    db = await lancedb.connect_async(str(location))
    _shutil.rmtree(location / "picture_vectors.lance", ignore_errors=True)
    settings = await db.open_table("settings")
    row = (await settings.query().to_list())[0]
    row["schema_version"] = version
    schema = await settings.schema()
    if version < 3:
        drops = {
            "documents": ["docling_document", "docling_version", "structure_revision", "structure_digest"],
            "chunks": ["item_refs", "boxes"],
        }
        for name, columns in drops.items():
            table = await db.open_table(name)
            gone = [*columns, "revision"] if version < 2 else columns
            await table.drop_columns([c for c in gone if c in (await table.schema()).names])
        for name in ("document_items", "page_images"):
            _shutil.rmtree(location / f"{name}.lance", ignore_errors=True)
        row.pop("processing", None)
        schema = pa.schema([f for f in schema if f.name != "processing"])
    await settings.add(pa.Table.from_pylist([row], schema=schema), mode="overwrite")
    db.close()


def send_json(handler: Any, status: int, payload: Any) -> None:
    """Answer one request of a ``BaseHTTPRequestHandler`` with ``payload`` as JSON (a client gone is ignored)."""
    import json

    data = json.dumps(payload).encode()
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
    except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting
        pass


def json_handler(answer: Any) -> type:
    """A quiet request handler: each POST's JSON body goes to ``answer(path, body, headers)``,
    which returns ``(status, payload)``."""
    import json
    from http.server import BaseHTTPRequestHandler

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # keep test output clean
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            send_json(self, *answer(self.path, body, self.headers))

    return Handler


class LoopbackServer:
    """A real HTTP server on 127.0.0.1, in a daemon thread, for the scripted model endpoints
    the tests stand up where no real model can run; ``base_url`` ends in ``/v1``."""

    def __init__(self, handler: type) -> None:
        import threading
        from http.server import ThreadingHTTPServer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def solid_png(colour: tuple[int, int, int], size: tuple[int, int] = (96, 72)) -> bytes:
    """A PNG of one colour: a picture a test can tell apart from another by its first pixel."""
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="PNG")
    return buffer.getvalue()


def run_main_in_process(
    main: Callable[[], Any],
    argv: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run a console script's ``main()`` in this process as its subprocess would run, for tests
    that check only what a command prints and its exit status (a process start costs ~1 s here).

    ``argv[0]`` is the program as ``sys.argv[0]`` and click's usage lines name it; the
    environment is ``cli_env(**env)``, stdin is ``input``, the directory ``cwd``. The
    process's end (``haiku.core.process_exit.leave``, ``os._exit``) becomes the exit
    status, and an exception no handler took prints its traceback and exits 1, as
    the interpreter would. Process-wide settings a command makes (logging, warnings,
    the status line, the lancedb import mode) are put back afterwards. Start-up,
    import-time, signal, daemon and end-to-end tests start real processes instead.
    """
    import asyncio
    import contextlib
    import logging
    import sys
    import traceback
    import types
    import warnings
    from concurrent.futures import ThreadPoolExecutor

    from click.testing import CliRunner

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:  # an async test: the command's asyncio.run needs a thread with no loop running
        with ThreadPoolExecutor(1) as thread:
            return thread.submit(run_main_in_process, main, argv, env=env, cwd=cwd, input=input).result()

    from haiku.core import _lancedb, logs, process_exit, progress

    def leave(code: int = 0) -> NoReturn:
        raise SystemExit(code)

    wanted = cli_env(**(env or {}))
    overrides: dict[str, str | None] = {k: None for k in os.environ if k not in wanted}
    overrides.update({k: v for k, v in wanted.items() if os.environ.get(k) != v})
    root = logging.getLogger()
    saved = (
        root.handlers[:], root.level, warnings.showwarning, sys.argv, sys.modules["__main__"],
        logs._minimum, progress._reporter, _lancedb._hide_pandas, process_exit.leave, os._exit,
    )
    structlog = sys.modules.get("structlog")
    structlog_config = structlog.get_config() if structlog else None
    # A console script's __main__ has no package, so click names the program by argv[0].
    script = types.ModuleType("__main__")
    code = 0
    runner = CliRunner()
    with contextlib.chdir(cwd or os.getcwd()), runner.isolation(input=input, env=overrides) as (out, err, _):
        sys.argv, sys.modules["__main__"], process_exit.leave, os._exit = list(argv), script, leave, leave
        try:
            main()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if not isinstance(exc.code, int | None):
                print(exc.code, file=sys.stderr)
        except BaseException:
            traceback.print_exc()
            code = 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            stdout, stderr = out.getvalue().decode(), err.getvalue().decode()
            (
                root.handlers[:], level, warnings.showwarning, sys.argv, sys.modules["__main__"],
                logs._minimum, progress._reporter, _lancedb._hide_pandas, process_exit.leave, os._exit,
            ) = saved
            root.setLevel(level)
            if structlog_config is not None:
                structlog.configure(**structlog_config)  # type: ignore[union-attr]
            elif "structlog" in sys.modules:
                sys.modules["structlog"].reset_defaults()
    return subprocess.CompletedProcess(list(argv), code, stdout, stderr)
