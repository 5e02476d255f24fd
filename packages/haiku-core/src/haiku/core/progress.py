"""One status line for long waits ("loading embedding model…").

Library code says what it is waiting for with ``status(message)``; nothing is
shown unless a front end installed a reporter (``haiku-rag`` does, on a
terminal, and never for ``--json`` output). Waits may overlap (databases open
while the model loads): the reporter is given the newest wait still running,
and ``None`` when none is left.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

Reporter = Callable[[str | None], None]

_reporter: Reporter | None = None
_waits: list[str] = []
_lock = threading.Lock()


def set_status_reporter(reporter: Reporter | None) -> None:
    global _reporter
    with _lock:
        _reporter = reporter
        _waits.clear()


@contextmanager
def status(message: str) -> Iterator[None]:
    if _reporter is None:
        yield
        return
    with _lock:
        _waits.append(message)
        _show()
    try:
        yield
    finally:
        with _lock:
            if message in _waits:  # absent when a reporter was installed meanwhile
                del _waits[len(_waits) - 1 - _waits[::-1].index(message)]  # the newest entry with this text
            _show()


def _show() -> None:
    if _reporter is not None:
        _reporter(_waits[-1] if _waits else None)
