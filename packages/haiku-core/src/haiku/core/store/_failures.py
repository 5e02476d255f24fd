"""Reads that fail inside LanceDB become errors naming the database, never its location.

A damaged database (a data file missing, a garbled index) or an unreachable
one (object storage that times out) makes LanceDB raise a ``RuntimeError`` or
``OSError`` whose text carries the path, bucket or URI. ``name_read_failures``
wraps a store's public reads so such an error becomes ``SourceUnavailableError``
("database 'NAME' could not be read: …"), raised outside the handler so the
original, and the location in it, rides on no chain. Errors the store raises
on purpose (``HaikuError``, ``ValueError`` for bad arguments) pass unchanged.

On object storage each read is also bounded by ``lancedb.object_storage_timeout_s``
(opening is, in ``Store.open``): past it the read fails the same way, "its storage
did not answer within N s".
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Callable
from typing import Any, TypeVar

from haiku.core.errors import HaikuError, SourceUnavailableError
from haiku.core.logs import get_logger

log = get_logger("haiku.core.store")

C = TypeVar("C", bound=type)

_LANCE_KIND = re.compile(r"LanceError\((\w+)\)")
_TIMEOUT = re.compile(r"time[d ]?out|deadline", re.IGNORECASE)


def _lance_failure(error: BaseException) -> bool:
    if isinstance(error, HaikuError) or not isinstance(error, RuntimeError | OSError):
        return False
    text = str(error)
    return "lance error" in text.lower() or "LanceError" in text or isinstance(error, OSError)


def read_failure_message(label: str, error: BaseException) -> str:
    """What a failed read says: the database, and the kind of failure without its details."""
    text = str(error)
    if _TIMEOUT.search(text):
        why = "its storage did not answer in time"
    else:
        kind = _LANCE_KIND.search(text)
        detail = f"LanceError({kind.group(1)})" if kind else type(error).__name__
        why = f"it is damaged or unreachable ({detail}); `haiku-rag doctor` checks it"
    return f"{label} could not be read: {why}"


def timeout_message(label: str, action: str, seconds: float | None) -> str:
    return f"{label} could not be {action}: its storage did not answer within {seconds:g} s"


def name_read_failures(*methods: str) -> Callable[[C], C]:
    """Class decorator: wrap the named async methods (see the module docstring)."""

    def decorate(cls: C) -> C:
        for name in methods:
            setattr(cls, name, _wrapped(getattr(cls, name)))
        return cls

    return decorate


def _wrapped(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    async def read(self, *args: Any, **kwargs: Any) -> Any:
        failed: BaseException | None = None
        deadline = self._deadline_s
        try:
            if deadline is None:
                return await method(self, *args, **kwargs)
            return await asyncio.wait_for(method(self, *args, **kwargs), deadline)
        except TimeoutError:
            message = timeout_message(self.label, "read", deadline)
        except Exception as error:
            if not _lance_failure(error):
                raise
            failed = error
            message = read_failure_message(self.label, error)
        log.debug("store.read_failed", database=self.name, error=type(failed).__name__ if failed else "timeout")
        raise SourceUnavailableError(message, database=self.name)

    return read
