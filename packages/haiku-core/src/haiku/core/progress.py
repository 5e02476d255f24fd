"""One status line for long waits ("loading embedding model…").

Library code says what it is waiting for with ``status(message)``; nothing is
shown unless a front end installed a reporter (``haiku-rag`` does, on a
terminal, and never for ``--json`` output). The reporter gets the message when
the wait begins and ``None`` when it ends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

Reporter = Callable[[str | None], None]

_reporter: Reporter | None = None


def set_status_reporter(reporter: Reporter | None) -> None:
    global _reporter
    _reporter = reporter


@contextmanager
def status(message: str) -> Iterator[None]:
    reporter = _reporter
    if reporter is None:
        yield
        return
    reporter(message)
    try:
        yield
    finally:
        reporter(None)
