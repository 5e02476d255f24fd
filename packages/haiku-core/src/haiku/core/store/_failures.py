"""Reads that fail inside LanceDB become errors naming the database, never its location
(docs/storage.md, "How failures are named").

A damaged database (a data file missing, a garbled index) or an unreachable
one (object storage that times out) makes LanceDB raise a ``RuntimeError`` or
``OSError`` whose text carries the path, bucket or URI. Each public read of a
``Store`` is decorated with ``names_read_failures``, so such an error becomes
``SourceUnavailableError`` ("database 'NAME' could not be read: …"), raised
outside the handler so the original, and the location in it, rides on no
chain. Errors the store raises on purpose (``HaikuError``, ``ValueError`` for
bad arguments) pass unchanged.

A version removed by a vacuum is not damage. A reader whose table handles
still point at a version that a vacuum with a short retention has removed
finds its files gone ("Not found"), or LanceDB refuses to open that version
(its ``ValueError("Version N no longer exists. Was it cleaned up?")``); the
read then brings every handle to the latest version and runs again, quietly
(a debug log), up to ``PRUNED_ATTEMPTS`` times in all, since a vacuum still
running may remove the version the read just moved to. Only a read that still
fails at the latest version says the database is damaged, by name
(docs/storage.md, "Vacuum").

On object storage each read is also bounded by ``lancedb.object_storage_timeout_s``
(opening is, in ``opening``): past it the read fails the same way, "its storage
did not answer within N s".
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from haiku.core.errors import HaikuError, Hint, SourceUnavailableError
from haiku.core.logs import get_logger

if TYPE_CHECKING:
    from haiku.core.store.handles import Handles

log = get_logger("haiku.core.store")

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])

_LANCE_KIND = re.compile(r"LanceError\((\w+)\)")
_TIMEOUT = re.compile(r"time[d ]?out|deadline", re.IGNORECASE)
_NOT_FOUND = re.compile(r"not ?found", re.IGNORECASE)
_VERSION_GONE = re.compile(r"\bVersion \d+ no longer exists\b")
PRUNED_ATTEMPTS = 4


class HasHandles(Protocol):
    handles: Handles


def _version_gone(error: BaseException) -> bool:
    """LanceDB's refusal to open a version a vacuum removed (a ``ValueError``, unlike its other read failures)."""
    return isinstance(error, ValueError) and not isinstance(error, HaikuError) and bool(_VERSION_GONE.search(str(error)))


def _lance_failure(error: BaseException) -> bool:
    if _version_gone(error):
        return True
    if isinstance(error, HaikuError) or not isinstance(error, RuntimeError | OSError):
        return False
    text = str(error)
    return "lance error" in text.lower() or "LanceError" in text or isinstance(error, OSError)


def _pruned_under_reader(error: BaseException, handles: Handles) -> bool:
    """Whether the failure may be a version a vacuum removed: a file or a version not found, in a live store."""
    if handles.tag is not None:
        return False
    return _version_gone(error) or (_lance_failure(error) and bool(_NOT_FOUND.search(str(error))))


# What to do about a database that fails a read (a front end words it as its own check command).
CHECK_HINT = Hint("check-database", "a check of the database (doctor) says more")


def read_failure(label: str, name: str | None, error: BaseException) -> SourceUnavailableError:
    """What a failed read says: the database, and the kind of failure without its details."""
    text = str(error)
    if _TIMEOUT.search(text):
        return SourceUnavailableError(f"{label} could not be read: its storage did not answer in time", database=name)
    kind = _LANCE_KIND.search(text)
    detail = f"LanceError({kind.group(1)})" if kind else type(error).__name__
    return SourceUnavailableError.hinted(
        f"{label} could not be read: it is damaged or unreachable ({detail})", CHECK_HINT, database=name
    )


def timeout_message(label: str, action: str, seconds: float | None) -> str:
    return f"{label} could not be {action}: its storage did not answer within {seconds:g} s"


async def _read_at_latest_if_pruned(handles: Handles, read: Callable[[], Awaitable[Any]]) -> Any:
    """Run the read; when it failed on a version a vacuum may have removed, again at the latest."""
    for _ in range(PRUNED_ATTEMPTS - 1):
        try:
            return await read()
        except Exception as error:
            if not _pruned_under_reader(error, handles):
                raise
            reason = "its version is gone" if _version_gone(error) else "a file of its version is gone"
            log.debug("store.read_retried_at_latest", database=handles.name, reason=reason)
        await handles.refresh_to_latest()
    return await read()


def names_read_failures(method: F) -> F:
    """Decorate one public read of a store (its ``handles`` attribute): see the module docstring."""

    @functools.wraps(method)
    async def read(self: HasHandles, *args: Any, **kwargs: Any) -> Any:
        handles = self.handles
        failed: BaseException | None = None
        deadline = handles.deadline_s
        attempt = _read_at_latest_if_pruned(handles, lambda: method(self, *args, **kwargs))
        try:
            return await (attempt if deadline is None else asyncio.wait_for(attempt, deadline))
        except TimeoutError:
            failure = SourceUnavailableError(timeout_message(handles.label, "read", deadline), database=handles.name)
        except Exception as error:
            if not _lance_failure(error):
                raise
            failed = error
            failure = read_failure(handles.label, handles.name, error)
        log.debug("store.read_failed", database=handles.name, error=type(failed).__name__ if failed else "timeout")
        raise failure

    return read  # type: ignore[return-value]
