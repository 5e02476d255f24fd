"""Ending a command-line process without the interpreter's teardown (docs/cli.md, "Start-up time").

When a command has closed everything it opened, all that is left is Python
freeing every module object it loaded, one by one (Textual, pyarrow, LanceDB,
pydantic: 0.07-0.2 s on a small machine, for nothing a reader of the output
waits on). The read-only commands (haiku-rag's) write nothing that such a teardown would
finish, so the process leaves at once, once its log handlers and streams are
flushed. The exit handlers libraries register are not run: LanceDB's and
pyarrow's only release what the process's end releases anyway.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import NoReturn


def leave(code: int = 0) -> NoReturn:
    """End the process now with ``code``, its logging and its streams flushed."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass  # the reader is gone or the stream is closed: nothing left to deliver
    os._exit(code)
